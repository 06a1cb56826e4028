/**
 * Backups and restore (issue 30). What is durable is PostgreSQL (and the object storage of files);
 * Redis holds nothing that must survive. A physical backup of a busy service's database (pg_basebackup
 * with its WAL: what CloudNativePG and pgBackRest take, and what point-in-time recovery replays) is
 * restored into a cluster of its own, and the service started on it with an empty Redis serves on:
 * history is a consistent prefix of what the old one served, each channel's `seq` goes on from where
 * the backup left it without a gap or a reuse, realtime and sync carry the new messages, and every
 * message's webhook is delivered (those the backup still held as pending, again) with none delivered
 * twice by the restored service. A logical dump (pg_dump) restored into a fresh cluster does not keep
 * the transaction ids the event log is ordered by: the service refuses to start on it, and says why.
 */
import { randomBytes } from 'crypto';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket } from '../support/socket';
import { call, channelEvents, ChatRoom, chatRoom, send } from './support/chat';
import {
  FaultEnvironment,
  poll,
  PrivatePostgres,
  PrivateRedis,
  ServiceProcess,
  sleep,
} from './support/processes';

interface Seen {
  id: string;
  seq: number;
  content: string;
}

/**
 * The last part of the fault suite: it stops the environment's services (the old cluster "is lost").
 * The environment must let webhooks reach 127.0.0.1 (SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS).
 */
export function backupAndRestore(environment: () => FaultEnvironment): void {
  let env: FaultEnvironment;
  let rx: Receiver;
  const extra: { stop: () => Promise<unknown> }[] = [];

  beforeAll(async () => {
    env = environment();
    rx = await Receiver.start();
  });
  afterAll(async () => {
    closeAllSockets();
    for (const e of extra.reverse()) await e.stop().catch(() => undefined);
    await rx?.close();
  });

  /** Every event of the channel in seq order (its messages, membership changes), through the backend's key. */
  async function allEvents(via: ServiceProcess, room: ChatRoom): Promise<Seen[]> {
    return (await channelEvents(via, room)).map((e) => ({
      id: e.type === 'message.new' ? e.data.id : e.type,
      seq: e.seq,
      content: e.data?.content,
    }));
  }
  /** Moves the cluster's transaction counter on by `n`. */
  async function burnTransactionIds(n: number): Promise<void> {
    await env.pg.query(`CREATE OR REPLACE PROCEDURE burn_xids(n int) LANGUAGE plpgsql AS $$
      BEGIN FOR i IN 1..n LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`);
    await env.pg.query(`CALL burn_xids(${n})`);
  }
  const contiguous = (events: Seen[]) =>
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

  it('a logical dump restored into a fresh cluster is refused at start-up, with the reason', async () => {
    // a database in use (its cluster's transaction counter well ahead of a fresh one's, as any cluster in
    // use is) with events, dumped with pg_dump and restored into a cluster that never ran it
    await burnTransactionIds(5000);
    const room = await chatRoom(env, env.apis[0], ['dee', 'eve']);
    expect((await send(env.apis[0], room, room.users[0]!, 'before the dump')).status).toBe(201);
    const target = new PrivatePostgres();
    extra.push(target);
    await target.start();
    const dump = env.pg.path(`chat-${randomBytes(4).toString('hex')}.dump`);
    await env.pg.tool('pg_dump', ['-Fc', '-f', dump, env.pg.url()]);
    await target.tool('pg_restore', ['--no-owner', '-d', target.url(), dump]);
    const started = ServiceProcess.start('from-dump', {
      ...env.apis[0].env,
      DATABASE_URL: target.url(),
      SERVICE_ROLE: 'api',
    });
    await expect(started).rejects.toThrow(/restored from a logical dump \(pg_dump\)/);
  }, 300_000);

  it('a physical backup of a busy service restores into a cluster that serves on without a gap or a duplicate', async () => {
    // the old cluster's transaction counter well ahead of a fresh one's (as any cluster in use is)
    await burnTransactionIds(5000);

    const room = await chatRoom(env, env.apis[0], ['ana', 'bo', 'cy']);
    const hookUrl = rx.url(200, 'restore');
    const hook = await call(env.apis[0], 'POST', '/v1/webhooks', room.workspace.auth, {
      url: hookUrl,
      events: ['message.created'],
    });
    expect(hook.status).toBe(201);

    // busy: three senders through both instances until told to stop; the backup is taken meanwhile
    let sending = true;
    const acknowledged: Seen[] = [];
    const senders = room.users.map(async (u, i) => {
      for (let n = 0; sending; n++) {
        const r = await send(env.apis[i % 2]!, room, u, `${u.externalId} ${n}`);
        if (r.status === 201) acknowledged.push({ id: r.body.id, seq: r.body.seq, content: r.body.content });
      }
    });
    await poll('traffic before the backup', async () => acknowledged.length >= 60, 30_000);
    const restored = new PrivatePostgres();
    extra.push(restored);
    await restored.startFromBaseBackup(env.pg);
    const atBackup = acknowledged.length;
    await poll('traffic after the backup', async () => acknowledged.length >= atBackup + 40, 30_000);
    sending = false;
    await Promise.all(senders);
    const served = await allEvents(env.apis[0], room);
    contiguous(served);
    const messagesServed = served.filter((e) => e.content !== undefined).length;
    expect(messagesServed).toBe(acknowledged.length);
    // the old service's webhooks, all delivered, before it goes
    await rx.waitFor(hookUrl, { count: messagesServed, timeoutMs: 30_000 });

    // the old cluster is gone; the restored one, an empty Redis, and the service on them
    for (const s of env.all()) await s.stop();
    const redis = new PrivateRedis();
    extra.push({ stop: () => redis.kill() });
    await redis.start();
    const deliveredBefore = rx.received(hookUrl).length;
    const service = await ServiceProcess.start('restored', {
      ...env.apis[0].env,
      DATABASE_URL: restored.url(),
      REDIS_URL: redis.url,
      SERVICE_ROLE: 'all',
    });
    extra.push(service);

    // history: a consistent prefix of what the old service served (nothing torn, nothing invented)
    const kept = await allEvents(service, room);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(served.length); // sent after the backup: not in it
    expect(kept).toEqual(served.slice(0, kept.length));
    contiguous(kept);
    const last = kept[kept.length - 1]!.seq;

    // realtime and sync go on from the backup's last seq: no gap, no reuse
    const socket = await connectSocket(service.baseUrl, room.users[1]!.token);
    const fresh: Seen[] = [];
    for (let i = 1; i <= 5; i++) {
      const r = await send(service, room, room.users[0]!, `after restore ${i}`);
      expect(r.status).toBe(201);
      fresh.push({ id: r.body.id, seq: last + i, content: r.body.content });
    }
    await socket.waitFor('message.new', (p) => p.data.id === fresh[4]!.id, 15_000);
    const synced = await allEvents(service, room);
    expect(synced).toEqual([...kept, ...fresh]);
    // realtime is at least once: the publisher resumes from its last saved position, so the socket may
    // get the restored log's last events again (a client ignores a seq it holds), then each new one;
    // nothing out of order, nothing twice, nothing that is not in the log
    const live = socket.events
      .filter((e) => e.name === 'message.new')
      .map((e) => ({
        id: e.payload.data.id as string,
        seq: e.payload.seq as number,
        content: e.payload.data.content,
      }));
    expect(live.slice(-fresh.length)).toEqual(fresh);
    expect(live.map((m) => m.seq)).toEqual(live.map((m) => m.seq).sort((a, b) => a - b));
    expect(new Set(live.map((m) => m.seq)).size).toBe(live.length);
    const inLog = new Map(synced.map((e) => [e.seq, e]));
    for (const m of live) expect(m).toEqual(inLog.get(m.seq));

    // webhooks: every message of the restored log reaches the receiver; the restored service delivers
    // each at most once (those the backup held as pending go again, with the same event id)
    const messageOf = (r: { json: any }) => r.json?.data?.message?.id as string;
    await poll(
      'webhooks of the restored log',
      async () => {
        const got = new Set(rx.received(hookUrl).map(messageOf));
        return [...kept, ...fresh].every((m) => m.content === undefined || got.has(m.id));
      },
      30_000,
    );
    await sleep(1_000); // anything sent twice would have come by now
    const byRestored = rx.received(hookUrl).slice(deliveredBefore);
    const events = byRestored.map((r) => r.json.event_id as string);
    expect(new Set(events).size).toBe(events.length);
    expect(byRestored.map(messageOf)).toEqual(expect.arrayContaining(fresh.map((m) => m.id)));
  }, 300_000);
}
