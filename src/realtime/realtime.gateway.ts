import { BeforeApplicationShutdown, Inject, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayInit, WebSocketGateway, WebSocketServer } from '@nestjs/websockets';
import { plainToInstance } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsString,
  MaxLength,
  MinLength,
  validate,
} from 'class-validator';
import { DataSource } from 'typeorm';
import { CredentialsService, UserLookup } from '../auth/credentials.service';
import { fromUserKeys, userKey } from '../auth/user-id.cache';
import { prepared } from '../infra/database/prepared';
import { bannedFromWorkspaceSql } from '../bans/bans.repository';
import { ChannelAccess } from '../channels/channel-access.service';
import type { UserPrincipal } from '../common/auth/principal';
import { AppError, errorBody } from '../common/errors/app-error';
import { toAppError } from '../common/errors/to-app-error';
import { validationErrorFrom } from '../common/errors/validation';
import { checkInput } from '../common/http/input-hygiene';
import { SendMessageDto } from '../messages/dto/send-message.dto';
import { MessagesService } from '../messages/messages.service';
import { ReceiptsService } from '../receipts/receipts.service';
import { Draining } from '../ops/draining';
import { WorkspaceQuotas } from '../admission/workspace-quotas';
import { WorkspaceChanges } from '../workspaces/workspace-changes';
import { isLarge, largeChannelSql } from '../workspaces/workspace-settings';
import { WorkspaceSettingsCache } from '../workspaces/workspace-settings.cache';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { Metrics } from '../ops/metrics';
import { Batcher } from '../common/batcher';
import { OVERRUN_WINDOW_MS, SocketBudget } from './socket-budget';
import { DueSchedule } from './due-schedule';
import { PresenceCoalescer, presenceModeOf } from './presence.coalescer';
import {
  Ack,
  AppServer,
  AppSocket,
  channelRoom,
  presenceRoom,
  presenceSubRoom,
  userRoom,
} from './realtime-events';
import { PresenceReader } from '../channels/presence-reader';

class ChannelRefDto {
  @IsString() @MinLength(1) @MaxLength(200) channel_id!: string;
}

/** CONTRACT §29: at most this many ids per presence.subscribe, and subscriptions per socket. */
const MAX_SUBSCRIBE_IDS = 200;
const MAX_SUBSCRIPTIONS = 500;

class PresenceSubscriptionDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SUBSCRIBE_IDS)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(200, { each: true })
  external_ids!: string[];
}

class SocketSendDto extends SendMessageDto {
  @IsString() @MinLength(1) @MaxLength(200) channel_id!: string;
}

const TYPING_TTL_MS = 6_000;
/** In a large channel, at most one typing.start per channel this often (CONTRACT §29). */
const LARGE_TYPING_INTERVAL_MS = 1_000;
/** How soon credentials are checked again when the database could not say. */
const RECHECK_RETRY_MS = 5_000;

/** What a handshake loads of its user (RealtimeGateway.arrivals). */
interface Arrival {
  userId: string;
  channelIds: string[];
  banned: boolean;
}

/** A socket's own state (RealtimeGateway.sessions). */
interface SocketSession {
  token: string;
  validUntil: number;
  /** When its credentials are checked again (RealtimeGateway.rechecks' step). */
  recheckStep?: number;
  /** Its channel rooms, loaded by the handshake and joined on connection. */
  rooms?: string[];
  /** Settles once the socket has joined its rooms (set on connection): its events wait for it. */
  ready?: Promise<void>;
}

async function parse<T extends object>(cls: new () => T, payload: unknown): Promise<T> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new AppError('VALIDATION_ERROR', 'The payload must be an object');
  }
  checkInput(payload, '');
  const dto = plainToInstance(cls, payload);
  const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length) throw validationErrorFrom(errors);
  return dto;
}

/**
 * The Socket.IO endpoint. Handshake: a user JWT in `auth.token` or `?token=`. Each socket joins
 * `user:<id>`, `channel:<id>` for each membership and, if it asked for `batch` or `none` presence,
 * `presence:<mode>`; the publisher moves sockets when memberships change. Inbound events share the REST services, so rules, errors and idempotency
 * are the same. Presence is counted and announced by the PresenceCoalescer.
 */
@WebSocketGateway()
export class RealtimeGateway implements OnGatewayInit, OnGatewayConnection, BeforeApplicationShutdown {
  @WebSocketServer() server!: AppServer;
  private readonly logger = new Logger('Realtime');
  private readonly typing = new Map<string, NodeJS.Timeout>();
  /** Large channels whose typing.start went out less than a second ago, with the latest one waiting. */
  private readonly largeTyping = new Map<
    string,
    { timer: NodeJS.Timeout; next: { userId: string; emit: () => void } | null }
  >();
  private closing = false;
  /** Each socket's presence subscriptions: external_id → user id (CONTRACT §29). They end with the socket. */
  private readonly subscriptions = new WeakMap<AppSocket, Map<string, string>>();
  /**
   * Each user's budget of client events on this instance, spent before any other work (made by the
   * first event: an idle socket holds none). It is shared by the user's sockets (so it bounds each of
   * them too) and kept for a while after the last one closes: opening more sockets or reconnecting buys
   * no fresh budget, and a user whose socket was closed for flooding is refused at the handshake until
   * the flood's ten seconds are over.
   */
  private readonly budgets = new Map<string, SocketBudget>();
  /**
   * Each socket's own state, in one record: its credentials (its token, until when they hold, checked
   * again when they run out), its channel rooms until it joins them and `ready`, which settles once it
   * has (events wait for it).
   */
  private readonly sessions = new WeakMap<AppSocket, SocketSession>();
  /** Sockets whose credentials are checked again, by when: one timer for the sockets due together. */
  private readonly rechecks = new DueSchedule<AppSocket>((socket) => void this.recheck(socket));
  /**
   * What a handshake needs to know of its user (by `userKey`), for a burst of connects in one statement:
   * their id, their channels and whether they are banned workspace-wide (CONTRACT §19). Always read
   * afresh (no cache): a deleted user, a membership or a ban that just changed counts at once.
   */
  private readonly arrivals = new Batcher<string, Arrival | null>(async (keys) => {
    const rows = await prepared<{
      workspace_id: string;
      external_id: string;
      id: string;
      channel_ids: string[];
      banned: boolean;
    }>(
      this.db.manager,
      `SELECT k.workspace_id, k.external_id, u.id,
              ARRAY(SELECT m.channel_id FROM channel_members m WHERE m.user_id = u.id) AS channel_ids,
              ${bannedFromWorkspaceSql('u.id')} AS banned
         FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, external_id)
         JOIN users u ON u.workspace_id = k.workspace_id AND u.external_id = k.external_id`,
      fromUserKeys(keys),
    );
    const found = new Map<string, Arrival | null>(keys.map((k) => [k, null]));
    for (const r of rows)
      found.set(userKey(r.workspace_id, r.external_id), {
        userId: r.id,
        channelIds: r.channel_ids,
        banned: r.banned,
      });
    return found;
  });

  constructor(
    private readonly credentials: CredentialsService,
    private readonly db: DataSource,
    private readonly presence: PresenceCoalescer,
    private readonly messages: MessagesService,
    private readonly receipts: ReceiptsService,
    private readonly access: ChannelAccess,
    private readonly changes: WorkspaceChanges,
    private readonly metrics: Metrics,
    private readonly draining: Draining,
    private readonly settings: WorkspaceSettingsCache,
    private readonly presenceReader: PresenceReader,
    private readonly quotas: WorkspaceQuotas,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  afterInit(server: AppServer): void {
    this.presence.attach(server);
    // shutting down: this instance's sockets lose their transport ("transport close"), which a
    // Socket.IO client answers by reconnecting on its own, to another instance ("io server disconnect",
    // from disconnectSockets, would leave every client that relies on that offline until it acts)
    this.draining.onStopIntake(() => {
      for (const socket of server.sockets.sockets.values()) socket.conn.close();
    });
    server.use((socket, next) => {
      const auth = socket.handshake.auth as { token?: unknown };
      const query = socket.handshake.query.token;
      const token =
        typeof auth?.token === 'string' ? auth.token : typeof query === 'string' ? query : undefined;
      const fail = (e: unknown) => {
        const { error } = toAppError(e);
        const err = new Error(error.message) as Error & { data: unknown };
        const kept = error.code === 'UNAVAILABLE' || error.code === 'BANNED' || error.code === 'RATE_LIMITED';
        err.data = errorBody(kept ? error : new AppError('UNAUTHORIZED', error.message));
        next(err);
      };
      if (!token) return fail(new AppError('UNAUTHORIZED', 'Missing token: connect with auth.token'));
      // the user is looked up with their channels and bans, one statement for a burst of connects
      let arrival: Arrival | null = null;
      const lookup: UserLookup = async (workspaceId, externalId) =>
        (arrival = await this.arrivals.load(userKey(workspaceId, externalId)))?.userId ?? null;
      this.credentials
        .userSession(token, lookup)
        .then(async ({ principal: p, validUntil }) => {
          // one of the workspace's sockets on this instance until its connection closes, however it ends
          const release = await this.quotas.admitSocket(p.workspaceId);
          socket.conn.once('close', release);
          // a user who just flooded is refused until the flood's ten seconds are over
          if (this.budgets.get(p.userId)?.exhausted) {
            release();
            this.metrics.limited.socket_connect.inc();
            throw new AppError(
              'RATE_LIMITED',
              'Too many events from this user; reconnect later',
              undefined,
              OVERRUN_WINDOW_MS / 1000,
            );
          }
          if (arrival?.banned) {
            release();
            throw new AppError('BANNED');
          }
          socket.data = { workspaceId: p.workspaceId, userId: p.userId, externalId: p.externalId };
          // the channel rooms are known before the handshake completes, so they are joined before the
          // client hears `connect`: nothing emitted to its channels after that can miss it
          this.sessions.set(socket, { token, validUntil, rooms: arrival?.channelIds.map(channelRoom) });
          next();
        })
        .catch(fail);
    });
    // credentials that stop holding close the sockets they opened: a deleted user's at once, and every
    // socket of a workspace whose keys changed is checked again (a rotation's grace is timed per socket)
    this.changes.onChange((c) => {
      if (c.kind === 'users' && c.userId) server.local.in(userRoom(c.userId)).disconnectSockets(true);
      if (c.kind === 'keys' || c.kind === 'deleted') {
        for (const socket of server.sockets.sockets.values())
          if (socket.data.workspaceId === c.workspaceId) void this.recheck(socket);
      }
    });
  }

  /**
   * A socket's credentials hold until its token's `exp` (or the end of its key's grace period): then the
   * token is checked again, and the socket closed if it no longer authenticates (the client reconnects
   * with a fresh token). A database that is away delays the check, never closes the socket.
   */
  private watch(socket: AppSocket): void {
    const s = this.sessions.get(socket);
    if (!s) return;
    if (s.recheckStep !== undefined) this.rechecks.cancel(socket, s.recheckStep);
    s.recheckStep = this.rechecks.add(socket, s.validUntil + 20);
  }

  private async recheck(socket: AppSocket): Promise<void> {
    const s = this.sessions.get(socket);
    if (!s || !socket.connected) return;
    try {
      s.validUntil = (await this.credentials.userSession(s.token)).validUntil;
    } catch (e) {
      const { error } = toAppError(e);
      if (error.code !== 'UNAVAILABLE') {
        socket.disconnect(true);
        return;
      }
      s.validUntil = Date.now() + RECHECK_RETRY_MS;
    }
    if (socket.connected) this.watch(socket); // one that closed meanwhile is not kept for its next check
  }

  async handleConnection(socket: AppSocket): Promise<void> {
    const { userId } = socket.data;
    const session = this.sessions.get(socket);
    if (!userId || !session) return;
    this.metrics.socketsConnected.inc();
    // the user room and the channel rooms (loaded by the handshake middleware) at once, in the same turn
    // as the connection, so before the client hears `connect`; the presence mode room before the channel
    // rooms: the adapter pairs a batch socket's channel rooms with batch rooms
    const mode = presenceModeOf(socket);
    const ready = Promise.all([
      socket.join(mode === 'each' ? userRoom(userId) : [userRoom(userId), presenceRoom(mode)]),
      socket.join(session.rooms ?? []),
    ]).then(() => undefined);
    session.ready = ready;
    session.rooms = undefined;
    this.watch(socket);
    this.keepWithinCap(userId); // the adapter put the socket in its user room at once (join's promise is Redis's part)
    // listeners made once for every socket (called with the socket as `this`): a socket costs no
    // functions of its own (nor `once` wrappers: a socket disconnects once)
    socket.on('disconnect', this.listeners.disconnect);
    socket.onAny(this.listeners.received);
    for (const [event, listener] of this.listeners.events) socket.on(event as 'message.send', listener);
    // while the socket is still in its rooms: the presence announcement needs them
    socket.on('disconnecting', this.listeners.disconnecting);
    try {
      await ready;
      session.ready = undefined; // settled: events run at once
      if (socket.connected && !this.closing) this.presence.joined(socket);
    } catch (e) {
      this.logger.warn(`connection setup failed: ${String(e)}`);
      socket.disconnect(true);
    }
  }

  /** A socket that closed (it has left its rooms): out of the count and the rechecks, its user's budget after a while. */
  private closed(socket: AppSocket): void {
    this.metrics.socketsConnected.dec();
    const step = this.sessions.get(socket)?.recheckStep;
    if (step !== undefined) this.rechecks.cancel(socket, step);
    const { userId } = socket.data;
    // the user's budget outlives their last socket here by the overrun window: a reconnect finds it spent
    if (this.budgets.has(userId) && !this.socketsOf(userId))
      setTimeout(() => {
        if (!this.socketsOf(userId)) this.budgets.delete(userId);
      }, OVERRUN_WINDOW_MS).unref();
  }

  /** The ids of a user's sockets on this instance in the order they connected: their user room's, kept by the adapter. */
  private socketsOf(userId: string): Set<string> | undefined {
    return this.server.sockets.adapter.rooms.get(userRoom(userId));
  }

  /** Sockets close with the server: no presence broadcasts then (Redis is about to close too). */
  beforeApplicationShutdown(): void {
    this.closing = true;
    this.rechecks.clear();
    for (const t of this.typing.values()) clearTimeout(t);
    this.typing.clear();
    for (const t of this.largeTyping.values()) clearTimeout(t.timer);
    this.largeTyping.clear();
  }

  private principal(socket: AppSocket): UserPrincipal {
    return { kind: 'user', ...socket.data };
  }

  /** A user's newest sockets on this instance are kept up to the cap; the oldest beyond it are closed. */
  private keepWithinCap(userId: string): void {
    const ids = this.socketsOf(userId);
    const excess = (ids?.size ?? 0) - this.config.SERVICE_SOCKETS_PER_USER;
    if (!ids || excess <= 0) return;
    for (const id of [...ids].slice(0, excess)) {
      this.metrics.limited.socket_cap.inc();
      this.server.sockets.sockets.get(id)?.disconnect(true);
    }
  }

  /**
   * Runs a client event's handler once the socket has joined its rooms, and answers the
   * acknowledgement `{ok, data}` / `{ok: false, error}`. The user's budget is spent first: beyond it
   * the event is refused (RATE_LIMITED) without being read, and a socket that keeps going is closed.
   */
  private dispatch(
    socket: AppSocket,
    fn: (socket: AppSocket, payload: unknown) => Promise<unknown>,
    payload: unknown,
    ack: ((a: Ack) => void) | undefined,
  ): void {
    const { userId } = socket.data;
    let budget = this.budgets.get(userId);
    if (!budget)
      this.budgets.set(userId, (budget = new SocketBudget(this.config.SERVICE_SOCKET_EVENTS_PER_SECOND)));
    if (!budget.take()) {
      this.metrics.limited.socket_event.inc();
      if (budget.exhausted) socket.disconnect(true);
      else if (typeof ack === 'function')
        ack({
          ok: false,
          error: errorBody(new AppError('RATE_LIMITED', 'Too many events; slow down', undefined, 1)).error,
        });
      return;
    }
    (this.sessions.get(socket)?.ready ?? Promise.resolve())
      .then(() => fn(socket, payload))
      .then((data) => ack?.({ ok: true, data: data ?? null }))
      .catch((e: unknown) => {
        const { error, unexpected } = toAppError(e);
        if (unexpected) this.logger.error({ err: e }, 'socket handler failed');
        ack?.({ ok: false, error: errorBody(error).error });
      });
  }

  /** Every socket's listeners, made once: Socket.IO calls them with the socket as `this`. */
  private readonly listeners = ((gateway: RealtimeGateway) => {
    const event = (fn: (socket: AppSocket, payload: unknown) => Promise<unknown>) =>
      function (this: AppSocket, payload: unknown, ack?: (a: Ack) => void): void {
        gateway.dispatch(this, fn, payload, ack);
      };
    const events: [string, (this: AppSocket, payload: unknown, ack?: (a: Ack) => void) => void][] = [
      [
        'message.send',
        event(async (socket, payload) => {
          const dto = await parse(SocketSendDto, payload);
          const { channel_id, ...body } = dto;
          if (body.scheduled_at !== undefined)
            throw AppError.validation(
              'scheduled_at',
              'scheduling a message is done over REST, not the socket',
            );
          const result = await gateway.messages.send(
            gateway.principal(socket),
            channel_id,
            Object.assign(new SendMessageDto(), body),
            { transport: 'socket' },
          );
          return result.message;
        }),
      ],
      [
        'channel.delivered',
        event(async (socket, payload) =>
          gateway.receipts.markDelivered(
            gateway.principal(socket),
            (await parse(ChannelRefDto, payload)).channel_id,
          ),
        ),
      ],
      [
        'channel.read',
        event(async (socket, payload) =>
          gateway.receipts.markRead(
            gateway.principal(socket),
            (await parse(ChannelRefDto, payload)).channel_id,
          ),
        ),
      ],
      ['presence.subscribe', event(async (socket, payload) => gateway.subscribe(socket, payload))],
      ['presence.unsubscribe', event(async (socket, payload) => gateway.unsubscribe(socket, payload))],
      ['typing.start', event(async (socket, payload) => gateway.typingEvent(socket, payload, true))],
      ['typing.stop', event(async (socket, payload) => gateway.typingEvent(socket, payload, false))],
    ];
    return {
      events,
      // every event the client sends, known or not (an unknown name has no listener above)
      received: (name: string) => gateway.metrics.received.of(name).inc(),
      disconnect(this: AppSocket): void {
        gateway.closed(this);
      },
      disconnecting(this: AppSocket): void {
        if (!gateway.closing) gateway.presence.leaving(this);
      },
    };
  })(this);

  /**
   * `presence.subscribe {external_ids}`: this socket hears `presence.changed` for these users from now
   * on, and gets their state now. Users outside the workspace, sharing no channel with the caller, or the
   * caller are ignored; past MAX_SUBSCRIPTIONS per socket nothing is subscribed (VALIDATION_ERROR).
   */
  private async subscribe(socket: AppSocket, payload: unknown) {
    const { external_ids } = await parse(PresenceSubscriptionDto, payload);
    const { workspaceId, userId } = socket.data;
    // with each user: do they share a channel that is not large (a batch socket hears of them there)
    const users = await this.db.query<
      { id: string; external_id: string; last_seen_at: Date | null; partner: boolean }[]
    >(
      `SELECT u.id, u.external_id, u.last_seen_at,
              EXISTS (SELECT 1 FROM channel_members mine JOIN channel_members theirs
                        ON theirs.channel_id = mine.channel_id AND theirs.user_id = u.id
                        JOIN channels c ON c.id = mine.channel_id JOIN workspaces w ON w.id = c.workspace_id
                       WHERE mine.user_id = $3 AND NOT ${largeChannelSql('c', 'w.settings')}) AS partner
         FROM users u
        WHERE u.workspace_id = $1 AND u.external_id = ANY($2::text[]) AND u.id <> $3
          AND EXISTS (SELECT 1 FROM channel_members mine JOIN channel_members theirs
                        ON theirs.channel_id = mine.channel_id AND theirs.user_id = u.id
                       WHERE mine.user_id = $3)`,
      [workspaceId, [...new Set(external_ids)], userId],
    );
    if (!socket.connected) return { users: [] }; // closed meanwhile: nothing to join
    const mine = this.subscriptions.get(socket) ?? new Map<string, string>();
    const after = new Set([...mine.keys(), ...users.map((u) => u.external_id)]);
    if (after.size > MAX_SUBSCRIPTIONS)
      throw AppError.validation(
        'external_ids',
        `at most ${MAX_SUBSCRIPTIONS} presence subscriptions per socket`,
      );
    // joined before the state is read: a change after the read reaches the socket. A batch socket
    // already hears of its partners through its channels' batches: only the others are added
    const mode = presenceModeOf(socket);
    await socket.join(
      users.filter((u) => mode !== 'batch' || !u.partner).map((u) => presenceSubRoom(u.id, mode)),
    );
    for (const u of users) mine.set(u.external_id, u.id);
    this.subscriptions.set(socket, mine);
    const online = await this.presenceReader.onlineOf(users.map((u) => u.id));
    return {
      users: users.map((u) => ({
        external_id: u.external_id,
        online: online.has(u.id),
        last_seen_at: online.has(u.id) || !u.last_seen_at ? null : new Date(u.last_seen_at).toISOString(),
      })),
    };
  }

  /** `presence.unsubscribe {external_ids}`: ids this socket is not subscribed to are ignored. */
  private async unsubscribe(socket: AppSocket, payload: unknown): Promise<null> {
    const { external_ids } = await parse(PresenceSubscriptionDto, payload);
    const mine = this.subscriptions.get(socket);
    for (const ext of external_ids) {
      const id = mine?.get(ext);
      if (!id) continue;
      mine!.delete(ext);
      await socket.leave(presenceSubRoom(id, presenceModeOf(socket)));
    }
    return null;
  }

  /** A large channel's typing.start: now if none went out in the last second, else the latest one at the second's end. */
  private throttledTyping(channelId: string, userId: string, emit: () => void): void {
    const t = this.largeTyping.get(channelId);
    if (!t) {
      emit();
      const timer = setTimeout(() => this.flushTyping(channelId), LARGE_TYPING_INTERVAL_MS);
      timer.unref();
      this.largeTyping.set(channelId, { timer, next: null });
      return;
    }
    t.next = { userId, emit };
  }

  private flushTyping(channelId: string): void {
    const t = this.largeTyping.get(channelId);
    if (!t) return;
    if (!t.next || this.closing) {
      this.largeTyping.delete(channelId);
      return;
    }
    const { emit } = t.next;
    t.next = null;
    emit();
    t.timer = setTimeout(() => this.flushTyping(channelId), LARGE_TYPING_INTERVAL_MS);
    t.timer.unref();
  }

  /**
   * Typing is not logged: it goes to the other members now and stops by itself after a few seconds. In a
   * large channel (CONTRACT §29) at most one `typing.start` a second goes out per channel from this
   * instance, the latest typer's, and `typing.stop` not at all (clients expire a typer after 5 s).
   */
  private async typingEvent(
    socket: AppSocket,
    payload: unknown,
    start: boolean,
  ): Promise<{ channel_id: string }> {
    const { channel_id: ref } = await parse(ChannelRefDto, payload);
    const { channel } = await this.access.open(this.principal(socket), ref);
    const { userId, externalId } = socket.data;
    const key = `${channel.id}:${userId}`;
    const emit = (type: 'typing.start' | 'typing.stop') => {
      const env = {
        v: 1 as const,
        type,
        channel_id: channel.id,
        data: { user_id: userId, external_id: externalId },
        ts: new Date().toISOString(),
      };
      const to = this.server.to(channelRoom(channel.id)).except(userRoom(userId));
      if (type === 'typing.start') to.emit('typing.start', { ...env, type });
      else to.emit('typing.stop', { ...env, type });
    };
    clearTimeout(this.typing.get(key));
    this.typing.delete(key);
    if (isLarge(channel.member_count, await this.settings.get(channel.workspace_id))) {
      if (start) this.throttledTyping(channel.id, userId, () => emit('typing.start'));
      else {
        // a stop withdraws this user's typing.start still waiting for the second to end
        const t = this.largeTyping.get(channel.id);
        if (t?.next?.userId === userId) t.next = null;
      }
      return { channel_id: channel.id };
    }
    if (start) {
      const timer = setTimeout(() => {
        this.typing.delete(key);
        emit('typing.stop');
      }, TYPING_TTL_MS);
      timer.unref();
      this.typing.set(key, timer);
    }
    emit(start ? 'typing.start' : 'typing.stop');
    return { channel_id: channel.id };
  }
}
