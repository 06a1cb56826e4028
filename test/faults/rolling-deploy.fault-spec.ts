import { randomUUID } from 'crypto';
import http from 'http';
import { io, Socket } from 'socket.io-client';
import { call, ChatRoom, chatRoom, ChatUser, history, Reply } from './support/chat';
import { FaultEnvironment, poll, ServiceProcess, sleep, startEnvironment } from './support/processes';

/**
 * Issue 15: a rolling deploy loses nothing. Two API instances and a worker on PostgreSQL + Redis of our
 * own, 200 sockets and a steady send load through a small load balancer that routes by /readyz, as a
 * Kubernetes Service does; each instance is replaced in turn the way a rolling update does it (the new
 * pod ready first, then SIGTERM to the old one, SIGKILL when its grace period is over).
 */

const USERS = 40;
const CHANNELS = 5;
const SOCKETS = 200;
/** of the sockets, the first ones also send over their socket; as many senders again use REST */
const SENDERS = 8;
/** after SIGTERM, the instances still serve this long while /readyz says 503 (for this load balancer) */
const SHUTDOWN_DELAY_SECONDS = 2;
/** the grace period, as the chart requires it: the delay, the service's 10 s drain deadline, a margin */
const GRACE_MS = (SHUTDOWN_DELAY_SECONDS + 10 + 5) * 1000;
/** how often the load balancer asks each instance /readyz (a readiness probe's periodSeconds) */
const PROBE_EVERY_MS = 200;

type Seen = Map<string, Map<number, string>>; // channel id → seq → message id

/**
 * A client-side load balancer, as a Kubernetes Service routes: to the instances whose last /readyz
 * answered 200. An instance stays a member until its process has gone; only its readiness takes it out
 * of the rotation before that.
 */
class LoadBalancer {
  private readonly members = new Set<ServiceProcess>();
  private readonly ready = new Set<ServiceProcess>();
  private turn = 0;
  private probing = true;
  private readonly prober: Promise<void>;

  constructor(
    members: ServiceProcess[],
    private readonly record: (what: string, r: Reply) => void,
  ) {
    for (const m of members) this.members.add(m);
    this.prober = (async () => {
      while (this.probing) {
        await Promise.all([...this.members].map((b) => this.probe(b)));
        await sleep(PROBE_EVERY_MS);
      }
    })();
  }

  /** A new instance: in the rotation once its probe says ready. */
  async add(b: ServiceProcess): Promise<void> {
    this.members.add(b);
    await poll(`${b.name} behind the load balancer`, () => this.probe(b), 10_000);
  }

  private async probe(b: ServiceProcess): Promise<boolean> {
    const r = await call(b, 'GET', '/readyz', null, undefined, 2_000);
    if (!b.alive) this.members.delete(b);
    else this.record(`${b.name} /readyz`, r);
    if (r.status === 200 && b.alive) this.ready.add(b);
    else this.ready.delete(b);
    return r.status === 200;
  }

  pick(): ServiceProcess | null {
    const ready = [...this.ready].filter((b) => b.alive);
    if (!ready.length) return null;
    return ready[this.turn++ % ready.length]!;
  }

  async stop(): Promise<void> {
    this.probing = false;
    await this.prober;
  }
}

/** One app: a socket through the load balancer, reconnected to a live instance whenever it drops, caught up through /v1/me/sync. */
class Client {
  socket: Socket | null = null;
  via: ServiceProcess | null = null;
  cursor = '';
  readonly seen: Seen = new Map();
  connects = 0;
  /** why each socket closed: `transport close` is the server sending it away (a client reconnects by itself) */
  readonly disconnects: string[] = [];
  /** what went wrong catching up (a refusal, a gap) */
  readonly errors: string[] = [];
  private closed = false;
  private reconnecting: Promise<void> | null = null;

  constructor(
    readonly user: ChatUser,
    private readonly lb: LoadBalancer,
    private readonly rest: (method: string, path: string, auth: string, body?: unknown) => Promise<Reply>,
  ) {}

  async start(): Promise<void> {
    const r = await this.rest('GET', '/v1/me/sync', this.user.auth);
    if (r.status !== 200) throw new Error(`sync cursor: ${r.status} ${JSON.stringify(r.body)}`);
    this.cursor = r.body.next_cursor;
    await this.connect();
  }

  private note(channelId: string, seq: number, id: string): void {
    let m = this.seen.get(channelId);
    if (!m) this.seen.set(channelId, (m = new Map()));
    m.set(seq, id);
  }

  /** Connects to a ready instance, then fetches what was missed since the cursor. */
  private connect(): Promise<void> {
    this.reconnecting ??= (async () => {
      for (;;) {
        if (this.closed) return;
        const via = this.lb.pick();
        if (via) {
          const s = await open(via, this.user.token);
          if (s) {
            this.socket = s;
            this.via = via;
            this.connects++;
            s.on('message.new', (e: { channel_id: string; seq: number; data: { id: string } }) =>
              this.note(e.channel_id, e.seq, e.data.id),
            );
            s.once('disconnect', (reason) => {
              if (this.closed) return;
              this.disconnects.push(reason);
              void this.connect();
            });
            await this.catchUp().catch((e: Error) => this.errors.push(e.message));
            return;
          }
        }
        await sleep(200);
      }
    })().finally(() => (this.reconnecting = null));
    return this.reconnecting;
  }

  /** Every event since the cursor, page by page; the cursor moves on only past what was received. */
  async catchUp(): Promise<void> {
    for (;;) {
      const r = await this.rest(
        'GET',
        `/v1/me/sync?since=${encodeURIComponent(this.cursor)}&limit=500`,
        this.user.auth,
      );
      if (r.status === 0 || r.status === 503) {
        await sleep(200);
        continue;
      }
      if (r.status !== 200) throw new Error(`sync answered ${r.status} ${JSON.stringify(r.body)}`);
      if (r.body.gap) throw new Error('sync answered a gap');
      for (const e of r.body.events as { type: string; channel_id?: string; seq?: number; data: any }[])
        if (e.type === 'message.new' && e.channel_id && e.seq) this.note(e.channel_id, e.seq, e.data.id);
      this.cursor = r.body.next_cursor;
      if (!r.body.has_more) return;
    }
  }

  /** A socket send, acknowledged or not: `null` when no answer came (a dropped socket). */
  async emit(payload: unknown): Promise<any> {
    if (this.reconnecting) await this.reconnecting;
    const s = this.socket;
    if (!s?.connected) return null;
    try {
      return await s.timeout(10_000).emitWithAck('message.send', payload);
    } catch {
      return null;
    }
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
  }
}

function open(via: ServiceProcess, token: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const s = io(via.baseUrl, {
      transports: ['websocket'],
      auth: { token },
      reconnection: false,
      forceNew: true,
    });
    const timer = setTimeout(() => fail('timeout'), 10_000);
    function fail(_why: unknown) {
      clearTimeout(timer);
      s.close();
      resolve(null);
    }
    s.once('connect', () => {
      clearTimeout(timer);
      resolve(s);
    });
    s.once('connect_error', fail);
  });
}

describe('a rolling deploy (issue 15)', () => {
  let env: FaultEnvironment | undefined;
  const clients: Client[] = [];

  beforeAll(async () => {
    // the load is many sends per user: not the rate limit under test
    env = await startEnvironment({
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      SERVICE_SOCKET_EVENTS_PER_SECOND: '1000',
      SERVICE_SHUTDOWN_DELAY_SECONDS: String(SHUTDOWN_DELAY_SECONDS),
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await env?.stop();
  });

  it('SIGTERM: /readyz says 503 at once while the instance still serves, then keep-alive clients are told to close, sockets to go, and the process exits by itself', async () => {
    const e = env!;
    const room = await chatRoom(e, e.apis[0], ['ana', 'bo']);
    const [ana] = room.users as [ChatUser];
    const one = await ServiceProcess.start('api-x', e.apis[0].env);
    const socket = io(one.baseUrl, {
      transports: ['websocket'],
      auth: { token: ana.token },
      reconnection: false,
    });
    const told = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // a keep-alive client that never lets its connection go idle (a load balancer's upstream pool)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const answers: { status: number; connection: string | undefined; after: boolean }[] = [];
    let signalled = false;
    let hogging = true;
    const hog = (async () => {
      while (hogging) {
        const answer = await new Promise<{ status: number; connection: string | undefined } | null>(
          (resolve) =>
            http
              .get(`${one.baseUrl}/healthz`, { agent }, (res) => {
                res.resume();
                res.once('end', () =>
                  resolve({ status: res.statusCode!, connection: res.headers.connection }),
                );
              })
              .once('error', () => resolve(null)),
        );
        if (!answer) break; // the instance has gone
        answers.push({ ...answer, after: signalled });
        await sleep(20);
      }
    })();
    try {
      await sleep(300);
      signalled = true;
      const ended = one.terminate(GRACE_MS);
      // not ready at once, yet still serving: a send through it is stored
      await poll(
        '/readyz 503 after SIGTERM',
        async () => (await call(one, 'GET', '/readyz', null)).status === 503,
        1_000,
        50,
      );
      const sent = await call(one, 'POST', `/v1/channels/${room.channelId}/messages`, ana.auth, {
        content: 'draining',
      });
      expect(sent.status).toBe(201);
      // then the sockets are told to go (a client reconnects elsewhere), and the process exits cleanly
      expect(await told).toBe('transport close');
      const { exit, killed } = await ended;
      expect({ code: exit.code, signal: exit.signal, killed }).toEqual({
        code: 0,
        signal: null,
        killed: false,
      });
    } finally {
      hogging = false;
      await hog;
      socket.close();
      agent.destroy();
      await one.stop();
    }
    // the keep-alive client was answered throughout, and told to close its connection once the shutdown began
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => !a.after).length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.after).map((a) => a.connection)).toContain('close');
    expect(answers.filter((a) => !a.after && a.connection === 'close')).toEqual([]);
  });

  it('loses no acknowledged send, stores none twice, reconnects every socket with no gap, answers no 5xx but 503, and each instance exits within its grace period', async () => {
    const e = env!;
    // every HTTP answer the test got, to look for 5xx among all of them
    const replies: { what: string; status: number; body: unknown }[] = [];
    const record = (what: string, r: Reply) => {
      if (r.status >= 500) replies.push({ what, status: r.status, body: r.body });
    };
    const lb = new LoadBalancer(e.apis, record);
    await poll('an instance behind the load balancer', async () => lb.pick(), 10_000);
    // a 429 with Retry-After is waited out and the call made again, as the typed client does: 200 sockets
    // that all move to one instance and catch up at once are held to their workspace's concurrency quota
    // there, and on a slow machine some wait longer than its 5 s for a turn
    let throttled = 0;
    const rest = async (method: string, path: string, auth: string, body?: unknown): Promise<Reply> => {
      for (;;) {
        const via = lb.pick();
        if (!via) {
          await sleep(100);
          continue;
        }
        const r = await call(via, method, path, auth, body);
        record(`${via.name} ${method} ${path.split('?')[0]}`, r);
        const retryAfter = Number(r.headers.get('retry-after'));
        if (r.status === 429 && r.body?.error?.code === 'RATE_LIMITED' && retryAfter >= 1) {
          throttled++;
          await sleep(retryAfter * 1000 * (1 + Math.random() / 2));
          continue;
        }
        return r;
      }
    };

    // 40 users in 5 channels, each user in two of them
    const ids = Array.from({ length: USERS }, (_, i) => `u${i}`);
    const room: ChatRoom = await chatRoom(e, e.apis[0], ids);
    const channelsOf = new Map<string, string[]>(ids.map((id) => [id, []]));
    const channels: string[] = [];
    for (let k = 0; k < CHANNELS; k++) {
      const members = ids.filter((_, i) => i % CHANNELS === k || (i + 1) % CHANNELS === k);
      const r = await call(e.apis[0], 'POST', '/v1/channels', room.workspace.auth, {
        type: 'group',
        external_id: `rolling-${k}`,
        created_by: members[0],
        member_external_ids: members.slice(1),
      });
      expect(r.status).toBe(201);
      channels.push(r.body.id);
      for (const m of members) channelsOf.get(m)!.push(r.body.id);
    }
    const users = new Map(room.users.map((u) => [u.externalId, u]));
    for (let i = 0; i < SOCKETS; i++) clients.push(new Client(room.users[i % USERS]!, lb, rest));
    for (let i = 0; i < SOCKETS; i += 20) await Promise.all(clients.slice(i, i + 20).map((c) => c.start()));

    // the steady load: senders over REST and over their sockets, each send with its idempotency key,
    // retried with the same key on a network error, a 503 or a dropped socket, as a client should
    const acked = new Map<string, string>(); // idempotency key → message id
    const refused: string[] = [];
    let sending = true;
    const restSender = async (user: ChatUser, n: number) => {
      const mine = channelsOf.get(user.externalId)!;
      for (let i = 0; sending; i++) {
        const key = randomUUID();
        const channel = mine[i % mine.length]!;
        for (;;) {
          const r = await rest('POST', `/v1/channels/${channel}/messages`, user.auth, {
            content: `rd ${key}`,
            idempotency_key: key,
          });
          if (r.status === 201 || r.status === 200) {
            acked.set(key, r.body.id);
            break;
          }
          if (r.status !== 0 && r.status !== 503) {
            refused.push(`REST send ${n}: ${r.status} ${JSON.stringify(r.body)}`);
            break;
          }
          await sleep(200);
        }
        await sleep(100);
      }
    };
    const socketSender = async (client: Client, n: number) => {
      const mine = channelsOf.get(client.user.externalId)!;
      for (let i = 0; sending; i++) {
        const key = randomUUID();
        const channel = mine[i % mine.length]!;
        for (;;) {
          const ack = await client.emit({ channel_id: channel, content: `rd ${key}`, idempotency_key: key });
          if (ack?.ok) {
            acked.set(key, ack.data.id);
            break;
          }
          if (ack && ack.error?.code !== 'UNAVAILABLE') {
            refused.push(`socket send ${n}: ${JSON.stringify(ack)}`);
            break;
          }
          await sleep(200);
        }
        await sleep(100);
      }
    };
    const load = [
      ...Array.from({ length: SENDERS }, (_, n) => restSender(users.get(`u${USERS - 1 - n}`)!, n)),
      ...Array.from({ length: SENDERS }, (_, n) => socketSender(clients[n]!, n)),
    ];

    // the rolling update: each instance in turn, the worker last
    const retired: {
      name: string;
      code: number | null;
      signal: string | null;
      killed: boolean;
      notReady: boolean;
    }[] = [];
    try {
      await sleep(3_000);
      for (const [i, name] of [
        [0, 'api-1b'],
        [1, 'api-2b'],
      ] as const) {
        const old = e.apis[i];
        await lb.add(await e.replace(old, name)); // maxSurge: the new pod is ready first
        const sentBefore = acked.size;
        // the old one keeps being probed until it has gone: after SIGTERM it must say not ready
        let notReady = false;
        const watch = (async () => {
          while (old.alive) {
            const r = await call(old, 'GET', '/readyz', null, undefined, 2_000);
            if (r.status === 503) notReady = true;
            await sleep(PROBE_EVERY_MS / 2);
          }
        })();
        const ended = await old.terminate(GRACE_MS);
        await watch;
        if (ended.exit.code !== 0)
          // why, for the failure below
          process.stderr.write(`${old.name} exited ${ended.exit.code}:\n${old.logs(40)}\n`);
        retired.push({
          name: old.name,
          code: ended.exit.code,
          signal: ended.exit.signal,
          killed: ended.killed,
          notReady,
        });
        // sends went on while the instance drained (else the test proves nothing)
        await poll(`sends after ${old.name} left`, async () => acked.size > sentBefore + 20, 30_000);
      }
      const oldWorker = e.worker;
      await e.replace(oldWorker, 'worker-b');
      const ended = await oldWorker.terminate(GRACE_MS);
      retired.push({
        name: oldWorker.name,
        code: ended.exit.code,
        signal: ended.exit.signal,
        killed: ended.killed,
        notReady: true, // behind no load balancer
      });
      const sentBefore = acked.size;
      await poll('sends after the restarts', async () => acked.size > sentBefore + 20, 30_000);
    } finally {
      sending = false;
      await Promise.all(load);
      await lb.stop();
    }
    e.expectAllAlive();

    // each old process went by itself (exit code 0, before the SIGKILL), saying not ready first
    expect(retired).toEqual(
      ['api-1', 'api-2', 'worker'].map((name) => ({
        name,
        code: 0,
        signal: null,
        killed: false,
        notReady: true,
      })),
    );
    // no answer was a 5xx other than 503, and no send was refused
    expect(
      replies.filter((r) => r.status !== 503).map((r) => `${r.what}: ${r.status} ${JSON.stringify(r.body)}`),
    ).toEqual([]);
    expect(refused).toEqual([]);
    expect(acked.size).toBeGreaterThan(100);
    if (throttled)
      console.log(`rolling deploy: ${throttled} answers 429 RATE_LIMITED, waited out and retried`);

    // every acknowledged send is in its channel's history exactly once, and nothing else was stored
    const reader = (channel: string) => users.get(ids.find((id) => channelsOf.get(id)!.includes(channel))!)!;
    const stored = new Map<string, string[]>(); // idempotency key → message ids
    const messagesOf = new Map<string, string[]>(); // channel → message ids
    for (const channel of channels) {
      const msgs = (await history(e.apis[0], channel, reader(channel))).filter((m) =>
        m.content?.startsWith('rd '),
      );
      messagesOf.set(
        channel,
        msgs.map((m) => m.id),
      );
      for (const m of msgs) {
        const key = m.content.slice(3);
        stored.set(key, [...(stored.get(key) ?? []), m.id]);
      }
    }
    const lost = [...acked].filter(([key, id]) => stored.get(key)?.[0] !== id);
    const twice = [...stored].filter(([, got]) => got.length > 1);
    expect({ lost: lost.length, duplicates: twice.length }).toEqual({ lost: 0, duplicates: 0 });
    // every sender retried until acknowledged: nothing was stored that its sender does not know of
    expect([...stored.keys()].filter((key) => !acked.has(key))).toEqual([]);

    // every socket is connected to a live instance of the new ones and, caught up through /v1/me/sync,
    // has every message of its channels with no gap in their seq
    const live = new Set(e.apis);
    const stranded = clients.filter(
      (c) => !c.socket?.connected || !c.via || !live.has(c.via) || !c.via.alive,
    );
    expect(stranded.map((c) => `${c.user.externalId} on ${c.via?.name}`)).toEqual([]);
    const gaps: string[] = [];
    for (const [n, c] of clients.entries()) {
      await c.catchUp();
      for (const channel of channelsOf.get(c.user.externalId)!) {
        const seen = c.seen.get(channel) ?? new Map<number, string>();
        const have = new Set(seen.values());
        const missing = messagesOf.get(channel)!.filter((id) => !have.has(id));
        const seqs = [...seen.keys()].sort((a, b) => a - b);
        const holes = seqs.filter((s, k) => k > 0 && s !== seqs[k - 1]! + 1);
        if (missing.length || holes.length)
          gaps.push(
            `socket ${n} (${c.user.externalId}) in ${channel}: ${missing.length} missing, holes before seq ${holes.join(',')}`,
          );
      }
    }
    expect(gaps).toEqual([]);
    expect(clients.flatMap((c) => c.errors.map((m) => `${c.user.externalId}: ${m}`))).toEqual([]);
    // and each moved: every socket was on a retired instance once, so it connected at least twice, each
    // time because the server told it to go (not a connection that just died)
    expect(clients.filter((c) => c.connects < 2).map((c) => c.user.externalId)).toEqual([]);
    expect([...new Set(clients.flatMap((c) => c.disconnects))]).toEqual(['transport close']);
  });
});
