import { spawn } from 'child_process';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';
import { call, ChatRoom, chatRoom, isContractError, metric, Reply, send } from './support/chat';
import { FaultEnvironment, poll, ServiceProcess } from './support/processes';

/** Longer than the 3–8 s after which an instance used to exit (issue 11, finding 1). */
const OUTAGE_MS = 10_000;
/** Issue 29: what was committed during an outage reaches every socket this soon after Redis answers again. */
const BACKLOG_WITHIN_MS = 2_000;
const OUTAGES_IN_A_ROW = 5;
const BLIPS = 3;

/**
 * When the last of `ids` reached the last of `sockets`, in ms after `back`, and how many (socket,
 * message) pairs never came (waiting well past the budget, to report by how much it was missed).
 */
async function arrivals(
  sockets: TestSocket[],
  ids: string[],
  back: number,
): Promise<{ committed: number; lastArrivalMs: number; missing: number }> {
  const deadline = back + BACKLOG_WITHIN_MS + 8_000;
  const each = await Promise.all(
    sockets.map(async (s) => {
      let last = back;
      let missing = 0;
      for (const id of ids) {
        const got = await s
          .waitFor('message.new', isMessage(id), Math.max(1, deadline - Date.now()))
          .then(() => s.events.find((e) => e.name === 'message.new' && e.payload?.data?.id === id))
          .catch(() => undefined);
        if (got) last = Math.max(last, got.at);
        else missing++;
      }
      return { last, missing };
    }),
  );
  return {
    committed: ids.length,
    lastArrivalMs: Math.max(...each.map((a) => a.last)) - back,
    missing: each.reduce((n, a) => n + a.missing, 0),
  };
}

/** `stress-ng --cpu 2` until stopped (by its PID): the loaded machine the backlog budget must hold on. */
async function loadTheMachine(): Promise<() => Promise<void>> {
  const child = spawn('stress-ng', ['--cpu', '2', '--timeout', '300s', '--quiet'], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (e) => reject(new Error(`stress-ng did not start: ${String(e)}`)));
  });
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
}

const isMessage = (id: string) => (e: any) => e?.data?.id === id;

/** A send while Redis is away: 201, or 503 UNAVAILABLE in the contract's shape; never a 500, never no answer. */
function expectServed(r: Reply, what: string): void {
  if (r.status === 201 || (r.status === 503 && isContractError(r, 'UNAVAILABLE'))) return;
  throw new Error(`${what} answered ${r.status} ${JSON.stringify(r.body)}`);
}

async function readyWithRedis(s: ServiceProcess): Promise<boolean> {
  const r = await call(s, 'GET', '/readyz', null);
  return r.status === 200 && r.body?.checks?.redis === 'up';
}

/** Issue 11, findings 1 and 6: Redis killed under two API instances and a worker, then started again (empty). */
export function redisOutage(environment: () => FaultEnvironment): void {
  describe('a Redis outage', () => {
    let env: FaultEnvironment;
    let room: ChatRoom;

    beforeAll(async () => {
      env = environment();
      room = await chatRoom(env, env.apis[0], ['ana', 'bo', 'cy']);
    });
    afterEach(() => closeAllSockets());

    const ana = () => room.users[0]!;
    const bo = () => room.users[1]!;

    it('kills no instance: REST and sockets keep working on each instance while Redis is away, and realtime works across instances again once it is back', async () => {
      const [one, two] = env.apis;
      const senders = await Promise.all(env.apis.map((api) => connectSocket(api.baseUrl, ana().token)));
      const receivers = await Promise.all(env.apis.map((api) => connectSocket(api.baseUrl, bo().token)));
      // across instances before the outage
      const before = await send(one, room, ana(), 'before the outage');
      expect(before.status).toBe(201);
      await receivers[1]!.waitFor('message.new', isMessage(before.body.id), 10_000);

      await env.redis.kill();
      const started = Date.now();
      let round = 0;
      while (Date.now() - started < OUTAGE_MS) {
        for (const [i, api] of env.apis.entries()) {
          const what = `${api.name}, ${Math.round((Date.now() - started) / 100) / 10} s into the outage`;
          expectServed(
            await send(api, room, ana(), `during ${round} via ${api.name}`),
            `REST send on ${what}`,
          );
          const ack = await senders[i]!.emitAck(
            'message.send',
            { channel_id: room.channelId, content: `socket ${round} via ${api.name}` },
            10_000,
          );
          if (!ack.ok && ack.error?.code !== 'UNAVAILABLE')
            throw new Error(`socket send on ${what}: ${JSON.stringify(ack)}`);
          // a socket connects, and typing reaches the other sockets of the same instance
          const fresh: TestSocket = await connectSocket(api.baseUrl, room.users[2]!.token);
          const typing = fresh.waitFor('typing.start', (e) => e?.data?.external_id === 'ana', 5_000);
          expect((await senders[i]!.emitAck('typing.start', { channel_id: room.channelId }, 10_000)).ok).toBe(
            true,
          );
          await typing;
          fresh.close();
        }
        env.expectAllAlive();
        round++;
        await sleep(500);
      }
      env.expectAllAlive();
      for (const s of [...senders, ...receivers]) expect(s.socket.connected).toBe(true);
      // the outage as /metrics shows it (what the chart's ChatRedisDown alert reads)
      for (const s of env.all()) expect([s.name, await metric(s, 'chat_redis_up')]).toEqual([s.name, 0]);

      await env.redis.start();
      for (const s of env.all())
        await poll(`${s.name} ready with Redis`, () => readyWithRedis(s), 30_000, 250);
      for (const s of env.all()) expect([s.name, await metric(s, 'chat_redis_up')]).toEqual([s.name, 1]);
      env.expectAllAlive();
      // across instances again: typing (the adapter alone), then messages (the adapter and the publisher)
      await poll(
        'typing across instances after the outage',
        async () => {
          const seen = receivers[1]!.waitFor('typing.start', (e) => e?.data?.external_id === 'ana', 1_000);
          await senders[0]!.emitAck('typing.start', { channel_id: room.channelId });
          return seen.then(() => true);
        },
        20_000,
      );
      await poll(
        'a message across instances after the outage',
        async () => {
          const m = await send(one, room, ana(), 'after the outage');
          expect(m.status).toBe(201);
          return receivers[1]!.waitFor('message.new', isMessage(m.body.id), 2_000).then(() => true);
        },
        30_000,
      );
      const back = await send(two, room, ana(), 'after the outage, the other way');
      await receivers[0]!.waitFor('message.new', isMessage(back.body.id), 10_000);
      env.expectAllAlive();
      // every Redis refusal was handled where it arose: none reached the process's last-resort handler
      for (const s of env.all())
        expect([s.name, await metric(s, 'process_unhandled_rejections_total')]).toEqual([s.name, 0]);
      expect(await metric(one, 'realtime_fanout_failures_total')).toBeGreaterThan(0); // counted, not thrown
    });

    it(`publishes what was committed during an outage to every socket within ${BACKLOG_WITHIN_MS} ms of Redis answering again, in seq order, ${OUTAGES_IN_A_ROW} outages and ${BLIPS} blips of 300 ms in a row on a loaded machine`, async () => {
      const r = await chatRoom(env, env.apis[0], ['ana', 'bo', 'cy', 'di', 'ed']);
      const [sender, ...readers] = r.users as [ChatRoom['users'][number], ...ChatRoom['users']];
      // 8 sockets: each of 4 readers on both instances
      const sockets = await Promise.all(
        readers.flatMap((u) => env.apis.map((api) => connectSocket(api.baseUrl, u.token))),
      );
      const first = await send(env.apis[0], r, sender, 'before the outages');
      expect(first.status).toBe(201);
      for (const s of sockets) await s.waitFor('message.new', isMessage(first.body.id), 10_000);
      const acked = [first.body.id as string];
      const stopLoad = await loadTheMachine();
      const rounds: Awaited<ReturnType<typeof arrivals>>[] = [];
      try {
        for (let round = 0; round < OUTAGES_IN_A_ROW; round++) {
          await env.redis.kill();
          const during: string[] = [];
          const until = Date.now() + 3_000;
          for (let i = 0; Date.now() < until; i++) {
            const api = env.apis[i % 2]!;
            const res = await send(api, r, sender, `outage ${round}, m${i} via ${api.name}`);
            expectServed(res, `send ${i} of outage ${round} via ${api.name}`);
            if (res.status === 201) during.push(res.body.id);
            await sleep(100);
          }
          await env.redis.start(); // resolves once Redis answers a connection
          const back = Date.now();
          acked.push(...during);
          rounds.push(await arrivals(sockets, during, back));
          env.expectAllAlive();
          for (const s of env.all())
            await poll(`${s.name} ready with Redis`, () => readyWithRedis(s), 30_000, 250);
        }
        // blips: Redis gone for 300 ms while sends (and so publishes) are in flight through both
        // instances; a publish queued across the drop is sent when the connection is back, possibly
        // before the other instance has subscribed again
        for (let blip = 0; blip < BLIPS; blip++) {
          const sent: string[] = [];
          let sending = true;
          const sends = (async () => {
            for (let i = 0; sending; i++) {
              const api = env.apis[i % 2]!;
              const res = await send(api, r, sender, `blip ${blip}, m${i} via ${api.name}`);
              expectServed(res, `send ${i} of blip ${blip} via ${api.name}`);
              if (res.status === 201) sent.push(res.body.id);
              await sleep(30);
            }
          })();
          await sleep(300);
          await env.redis.kill();
          await sleep(300);
          sending = false; // what the budget is about: what was committed before Redis came back
          await sends;
          await env.redis.start();
          const back = Date.now();
          acked.push(...sent);
          rounds.push(await arrivals(sockets, sent, back));
          for (const s of env.all())
            await poll(`${s.name} ready with Redis`, () => readyWithRedis(s), 30_000, 250);
        }
      } finally {
        await stopLoad();
      }
      // each outage committed messages, and each socket had all of them within the budget
      for (const round of rounds) expect(round.committed).toBeGreaterThan(0);
      expect(rounds.filter((x) => x.missing > 0 || x.lastArrivalMs > BACKLOG_WITHIN_MS)).toEqual([]);
      // on every socket: each message once (a seq it already has is dropped), in seq order, no gap
      for (const s of sockets) {
        const got = s.events.filter((e) => e.name === 'message.new' && e.payload.channel_id === r.channelId);
        const bySeq = new Map<number, string>();
        for (const e of got) {
          const had = bySeq.get(e.payload.seq);
          if (had !== undefined) expect(had).toBe(e.payload.data.id); // a repeat is the same event
          bySeq.set(e.payload.seq, e.payload.data.id);
        }
        const seqs = [...bySeq.keys()];
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b)); // first arrivals in seq order
        expect(seqs[seqs.length - 1]! - seqs[0]! + 1).toBe(seqs.length); // contiguous
        expect(new Set(bySeq.values())).toEqual(new Set(acked));
      }
    });

    it('loses no realtime event silently: what was committed around the outage reaches the sockets in seq order, or is there to fetch through /v1/me/sync', async () => {
      const r = await chatRoom(env, env.apis[0], ['ana', 'bo']);
      const [sender, reader] = r.users as [ChatRoom['users'][number], ChatRoom['users'][number]];
      const sockets = await Promise.all(env.apis.map((api) => connectSocket(api.baseUrl, reader.token)));
      const cursor = (await call(env.apis[0], 'GET', '/v1/me/sync', reader.auth)).body.next_cursor as string;
      expect(typeof cursor).toBe('string');

      // ana sends all along, through both instances: before, during and after the outage
      const acked: string[] = [];
      let sending = true;
      const sends = (async () => {
        for (let i = 0; sending; i++) {
          const api = env.apis[i % 2]!;
          const res = await send(api, r, sender, `m${i}`);
          expectServed(res, `send ${i} via ${api.name}`);
          if (res.status === 201) acked.push(res.body.id);
          await sleep(150);
        }
      })();
      try {
        await sleep(2_000);
        await env.redis.kill();
        await sleep(6_000);
        await env.redis.start();
        for (const s of env.all())
          await poll(`${s.name} ready with Redis`, () => readyWithRedis(s), 30_000, 250);
        await sleep(3_000);
      } finally {
        sending = false;
        await sends;
      }
      env.expectAllAlive();
      const last = acked[acked.length - 1]!;
      // events flow again after the outage: the last message reaches both sockets
      for (const s of sockets) await s.waitFor('message.new', isMessage(last), 20_000);

      const received = sockets.map((s) =>
        s.events
          .filter((e) => e.name === 'message.new' && e.payload.channel_id === r.channelId)
          .map((e) => ({ seq: e.payload.seq as number, id: e.payload.data.id as string })),
      );
      // on every socket: in seq order, each event once; a seq jump is how a client knows it missed something
      for (const got of received) {
        const seqs = got.map((e) => e.seq);
        expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      }
      // whatever a socket missed is there to fetch: every acknowledged message is in /v1/me/sync
      const synced = new Set<string>();
      for (let since = cursor, more = true; more;) {
        const page = await call(
          env.apis[1],
          'GET',
          `/v1/me/sync?since=${encodeURIComponent(since)}&limit=500`,
          reader.auth,
        );
        expect(page.status).toBe(200);
        for (const e of page.body.events as { type: string; data: { id?: string } }[])
          if (e.type === 'message.new' && e.data.id) synced.add(e.data.id);
        more = page.body.has_more;
        since = page.body.next_cursor;
      }
      expect(acked.filter((id) => !synced.has(id))).toEqual([]);

      // The strict version: the socket on the instance that publishes got every event, without a gap.
      // NOTE for the lead: this depends on the realtime publisher keeping its leadership and its cursor
      // while Redis is away (leadership by PostgreSQL advisory lock, the cursor in event_relay_cursors).
      // With the lease and the cursor in Redis, no instance publishes during the outage and the new leader
      // starts at the log's head, skipping what was committed meanwhile (issue 11, finding 6).
      const complete = received.map((got, i) => {
        const ids = new Set(got.map((e) => e.id));
        const seqs = got.map((e) => e.seq);
        const contiguous = seqs.every((s, k) => k === 0 || s === seqs[k - 1]! + 1);
        return {
          instance: env.apis[i]!.name,
          missing: acked.filter((id) => !ids.has(id)).length,
          contiguous,
        };
      });
      expect(complete).toContainEqual(expect.objectContaining({ missing: 0, contiguous: true }));
    });
  });
}
