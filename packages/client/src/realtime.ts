import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';
import { ChatApiError } from './errors.js';
import type {
  AnyEnvelope,
  ConnectionStatus,
  Envelope,
  ResetInfo,
  ServerEventMap,
  ServerEventName,
} from './events.js';
import type { ChannelEventPage, SyncEvent, SyncPage } from './generated/types.gen.js';
import type { RestTransport } from './rest.js';
import { Sequencer } from './sequencer.js';
import type { TokenManager } from './token.js';

export type PresenceMode = 'each' | 'batch' | 'none';

export interface RealtimeOptions {
  baseUrl: string;
  presence?: PresenceMode;
  /** A catch-up through /v1/me/sync this often while connected (default 30 s; 0: only after reconnects and gaps). */
  syncIntervalMs?: number;
  /** Passed to socket.io-client's io() (transports, path, ...). */
  socket?: Partial<ManagerOptions & SocketOptions>;
}

export type EventHandler<K extends ServerEventName> = (
  data: ServerEventMap[K],
  envelope: Envelope<K>,
) => void;
export type AnyEventHandler = (envelope: AnyEnvelope) => void;

type Task = { kind: 'event'; env: AnyEnvelope } | { kind: 'sync' } | { kind: 'marker'; done: () => void };

const PAGE = 500;
/** In Node, a back-off wait does not keep a process alive after disconnect() (an open socket does). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
const sleep = (ms: number) => new Promise<void>((r) => unref(setTimeout(r, ms)));

/** A sync or channel-events entry as the envelope the socket would have carried. */
export function envelopeOf(e: SyncEvent): AnyEnvelope {
  return {
    v: 1,
    type: e.type,
    ...(e.channel_id !== undefined ? { channel_id: e.channel_id } : {}),
    ...(e.seq !== undefined ? { seq: e.seq } : {}),
    data: e.data,
    ts: e.created_at,
  } as AnyEnvelope;
}

/**
 * The socket and the gap logic around it. Every event, live or caught up, goes through one queue in
 * order: a live jump in a channel's seq is filled from GET /v1/channels/:id/events before anything
 * after it is delivered; every (re)connect, and a timer, catch up through GET /v1/me/sync from the last
 * cursor; the Sequencer drops what was already delivered.
 */
export class Realtime {
  readonly sequencer = new Sequencer();
  private socket?: Socket;
  private cursor?: string;
  private status: ConnectionStatus = 'disconnected';
  private readonly queue: Task[] = [];
  private pumping = false;
  private closed = true;
  private syncQueued = false;
  private syncTimer?: ReturnType<typeof setInterval>;
  private tokenTimer?: ReturnType<typeof setTimeout>;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private manualRetries = 0;
  private ready?: { resolve: () => void; reject: (e: unknown) => void; promise: Promise<void> };
  private readonly handlers = new Map<string, Set<(data: never, env: never) => void>>();
  private readonly anyHandlers = new Set<AnyEventHandler>();
  private readonly statusHandlers = new Set<(s: ConnectionStatus) => void>();
  private readonly resetHandlers = new Set<(r: ResetInfo) => void>();
  private readonly errorHandlers = new Set<(e: unknown) => void>();

  constructor(
    private readonly rest: RestTransport,
    private readonly tokens: TokenManager,
    private readonly opts: RealtimeOptions,
  ) {}

  get connectionStatus(): ConnectionStatus {
    return this.status;
  }

  get syncCursor(): string | undefined {
    return this.cursor;
  }

  set syncCursor(c: string | undefined) {
    this.cursor = c;
  }

  /** Opens the socket; resolves once connected and caught up. Calling it again while open is harmless. */
  connect(): Promise<void> {
    if (this.ready && !this.closed) return this.ready.promise;
    this.closed = false;
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => undefined);
    this.ready = { resolve, reject, promise };
    this.setStatus('connecting');
    void this.open();
    return promise;
  }

  /** Closes the socket. The cursor and the channels' seqs stay: a later connect() resumes without a gap. */
  disconnect(): void {
    this.closed = true;
    clearInterval(this.syncTimer);
    clearTimeout(this.tokenTimer);
    clearTimeout(this.reconnectTimer);
    this.socket?.removeAllListeners();
    this.socket?.offAny();
    this.socket?.disconnect();
    this.socket = undefined;
    for (const t of this.queue.splice(0)) if (t.kind === 'marker') t.done();
    this.syncQueued = false;
    this.setStatus('disconnected');
    this.ready?.reject(new ChatApiError({ code: 'NETWORK_ERROR', status: 0, message: 'disconnected' }));
  }

  /** The raw socket (typing and other client events go through it); undefined before connect(). */
  get rawSocket(): Socket | undefined {
    return this.socket;
  }

  on<K extends ServerEventName>(name: K, handler: EventHandler<K>): () => void {
    let set = this.handlers.get(name);
    if (!set) this.handlers.set(name, (set = new Set()));
    const h = handler as unknown as (data: never, env: never) => void;
    set.add(h);
    return () => set.delete(h);
  }

  onAny(handler: AnyEventHandler): () => void {
    this.anyHandlers.add(handler);
    return () => this.anyHandlers.delete(handler);
  }

  onStatus(handler: (s: ConnectionStatus) => void): () => void {
    this.statusHandlers.add(handler);
    return () => this.statusHandlers.delete(handler);
  }

  onReset(handler: (r: ResetInfo) => void): () => void {
    this.resetHandlers.add(handler);
    return () => this.resetHandlers.delete(handler);
  }

  onError(handler: (e: unknown) => void): () => void {
    this.errorHandlers.add(handler);
    return () => this.errorHandlers.delete(handler);
  }

  /** Catches up through /v1/me/sync now (after whatever is already queued); resolves when done. */
  syncNow(): Promise<void> {
    if (this.closed)
      return Promise.reject(new ChatApiError({ code: 'NETWORK_ERROR', status: 0, message: 'not connected' }));
    return new Promise<void>((resolve) => {
      this.enqueue({ kind: 'sync' });
      this.enqueue({ kind: 'marker', done: resolve });
    });
  }

  private async open(): Promise<void> {
    try {
      // the cursor before the socket joins its rooms: the first sync after `connect` covers the window
      if (this.cursor === undefined)
        this.cursor = (await this.rest.json<SyncPage>('GET', '/v1/me/sync')).next_cursor;
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.closed) return;
    const socket = io(this.opts.baseUrl, {
      transports: ['websocket'],
      reconnectionDelayMax: 10_000,
      ...this.opts.socket,
      autoConnect: false,
      auth: (cb: (data: object) => void) => {
        this.tokens.get().then(
          (token) => cb({ token, ...(this.opts.presence ? { presence: this.opts.presence } : {}) }),
          (e: unknown) => {
            this.emitError(e);
            cb({});
          },
        );
      },
    });
    this.socket = socket;
    socket.onAny((_name: string, env: AnyEnvelope) => this.enqueue({ kind: 'event', env }));
    socket.on('connect', () => {
      this.manualRetries = 0;
      this.setStatus('syncing');
      this.enqueue({ kind: 'sync' });
      this.scheduleTokenRefresh();
      this.scheduleSync();
    });
    socket.on('disconnect', () => {
      if (this.closed) return;
      clearInterval(this.syncTimer);
      this.setStatus('connecting');
      // the service closed it (token expired, credentials changed): socket.io does not retry that itself
      if (!socket.active) this.reconnectLater(true);
    });
    socket.on('connect_error', (err: Error & { data?: { error?: { code?: string } } }) => {
      if (this.closed || socket.active) return; // a transport error: socket.io retries by itself
      const code = err.data?.error?.code;
      if (code === 'UNAUTHORIZED' && this.tokens.refreshable && this.manualRetries < 5) {
        this.reconnectLater(true);
        return;
      }
      if (code === 'UNAVAILABLE' || code === undefined) {
        this.reconnectLater(false);
        return;
      }
      this.fail(
        new ChatApiError({
          code: code as ChatApiError['code'],
          status: code === 'UNAUTHORIZED' ? 401 : 403,
          message: err.message,
        }),
      );
    });
    socket.connect();
  }

  private reconnectLater(newToken: boolean): void {
    clearTimeout(this.reconnectTimer);
    const delay = Math.min(10_000, 250 * 2 ** this.manualRetries++) * (0.5 + Math.random() / 2);
    this.reconnectTimer = setTimeout(() => {
      if (this.closed) return;
      const go = () => {
        if (!this.closed) this.socket?.connect();
      };
      if (newToken)
        this.tokens.refresh().then(go, (e: unknown) => (this.emitError(e), this.reconnectLater(true)));
      else go();
    }, delay);
  }

  /** Ahead of the token's exp: a new token, and the socket reconnected with it (sync covers the moment). */
  private scheduleTokenRefresh(): void {
    clearTimeout(this.tokenTimer);
    const ms = this.tokens.msUntilRefresh();
    if (ms === undefined) return;
    this.tokenTimer = setTimeout(
      () => {
        this.tokens.refresh().then(
          () => {
            if (this.closed || !this.socket) return;
            this.socket.disconnect();
            this.setStatus('connecting');
            this.socket.connect();
          },
          (e: unknown) => this.emitError(e),
        );
      },
      Math.min(ms, 2 ** 31 - 1),
    );
  }

  private scheduleSync(): void {
    clearInterval(this.syncTimer);
    const every = this.opts.syncIntervalMs ?? 30_000;
    if (every > 0) this.syncTimer = setInterval(() => this.enqueue({ kind: 'sync' }), every);
  }

  private fail(e: unknown): void {
    this.emitError(e);
    this.ready?.reject(e); // before disconnect(), whose own rejection is then a no-op
    this.disconnect();
  }

  private enqueue(t: Task): void {
    if (this.closed) return;
    if (t.kind === 'sync') {
      if (this.syncQueued) return;
      this.syncQueued = true;
    }
    this.queue.push(t);
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.length && !this.closed) {
        const t = this.queue.shift()!;
        if (t.kind === 'sync') this.syncQueued = false;
        if (t.kind === 'marker') t.done();
        else await this.retrying(() => (t.kind === 'sync' ? this.catchUp() : this.process(t.env)));
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Runs a step until it succeeds (a service that is away is waited for), unless the client closes. */
  private async retrying(step: () => Promise<void>): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        await step();
        return;
      } catch (e) {
        this.emitError(e);
        await sleep(Math.min(10_000, 200 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
  }

  private async process(env: AnyEnvelope): Promise<void> {
    let synced = false;
    for (;;) {
      const d = this.sequencer.accept(env, 'live', { trustUnknown: synced });
      switch (d.kind) {
        case 'deliver':
          this.dispatch(env);
          return;
        case 'duplicate':
          return;
        case 'gap':
          await this.fill(d.channel_id, d.after_seq, d.seq);
          break;
        case 'unknown':
          await this.catchUp();
          synced = true;
          break;
      }
    }
  }

  /** GET /v1/channels/:id/events after `afterSeq` until `seq - 1` is covered. */
  private async fill(channelId: string, afterSeq: number, seq: number): Promise<void> {
    let from = afterSeq;
    for (;;) {
      let page: ChannelEventPage;
      try {
        page = await this.rest.json<ChannelEventPage>(
          'GET',
          `/v1/channels/${encodeURIComponent(channelId)}/events`,
          {
            query: { after_seq: from, limit: PAGE },
          },
        );
      } catch (e) {
        if (e instanceof ChatApiError && (e.status === 403 || e.status === 404)) {
          // no longer a member, or the channel is gone: nothing more can be read; the app reloads it
          this.sequencer.settled(channelId, seq - 1);
          this.emitReset({ reason: 'channel', channel_id: channelId });
          return;
        }
        throw e;
      }
      for (const e of page.events) {
        const env = envelopeOf(e);
        if (this.sequencer.accept(env, 'fill').kind === 'deliver') this.dispatch(env);
        if (e.seq !== undefined) from = Math.max(from, e.seq);
      }
      if (!page.has_more || from >= seq - 1) break;
    }
    this.sequencer.settled(channelId, seq - 1);
  }

  /** GET /v1/me/sync from the cursor until it has no more. */
  private async catchUp(): Promise<void> {
    for (;;) {
      const page = await this.rest.json<SyncPage>('GET', '/v1/me/sync', {
        query: { ...(this.cursor !== undefined ? { since: this.cursor } : {}), limit: PAGE },
      });
      if (page.gap) {
        this.sequencer.forget();
        this.cursor = page.next_cursor;
        this.emitReset({ reason: 'retention' });
        break;
      }
      for (const e of page.events) {
        const env = envelopeOf(e);
        if (this.sequencer.accept(env, 'sync').kind === 'deliver') this.dispatch(env);
      }
      this.cursor = page.next_cursor;
      if (!page.has_more) break;
    }
    if (this.status === 'syncing' && this.socket?.connected) {
      this.setStatus('connected');
      this.ready?.resolve();
    }
  }

  private dispatch(env: AnyEnvelope): void {
    for (const h of this.handlers.get(env.type) ?? [])
      this.safely(() => (h as (d: unknown, e: unknown) => void)(env.data, env));
    for (const h of this.anyHandlers) this.safely(() => h(env));
  }

  private safely(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.emitError(e);
    }
  }

  private setStatus(s: ConnectionStatus): void {
    if (this.status === s) return;
    this.status = s;
    for (const h of this.statusHandlers) this.safely(() => h(s));
  }

  private emitReset(r: ResetInfo): void {
    for (const h of this.resetHandlers) this.safely(() => h(r));
  }

  private emitError(e: unknown): void {
    for (const h of this.errorHandlers) {
      try {
        h(e);
      } catch {
        // an error handler that throws has nobody left to tell
      }
    }
  }
}
