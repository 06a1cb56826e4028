import Redis from 'ioredis';
import { io } from 'socket.io-client';
import { RedisService } from '../../src/infra/redis/redis.module';
import { DataSource } from 'typeorm';
import { OFFLINE_GRACE_MS, PRESENCE_TICK_MS } from '../../src/realtime/presence.coalescer';
import { PresenceStore } from '../../src/realtime/presence.store';
import { startTestApp, startTwoInstances, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { Client, newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

const isMsg = (id: string) => (e: any) => e?.data?.id === id;

// both Socket.IO Redis adapters (SERVICE_REDIS_ADAPTER): the classic one and Redis 7 sharded pub/sub
describe.each(['classic', 'sharded'])('two instances on PostgreSQL + Redis (%s adapter)', (adapter) => {
  let one: TestApp;
  let two: TestApp;
  let close: () => Promise<void>;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    ({ one, two, close } = await startTwoInstances('mi', { SERVICE_REDIS_ADAPTER: adapter }));
  });
  afterAll(async () => {
    closeAllSockets();
    await close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(one);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `g-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo', 'cy'],
      })
    ).body;
  });
  afterEach(() => closeAllSockets());

  it('fans out through the configured adapter: one classic pub/sub channel, or sharded channels per room', async () => {
    await connectSocket(two.baseUrl, bo.token); // bo's rooms exist on instance two
    const probe = new Redis(process.env.REDIS_URL!);
    try {
      const pattern = `${one.app.get(RedisService).prefix}socket.io*`;
      const shard = (await probe.call('PUBSUB', 'SHARDCHANNELS', pattern)) as string[];
      const classic = (await probe.call('PUBSUB', 'CHANNELS', pattern)) as string[];
      if (adapter === 'sharded') {
        expect(classic).toEqual([]);
        // a channel per room an instance has sockets in: bo's channel room among them
        expect(shard.some((c) => c.includes(`channel:${ch.id}#`))).toBe(true);
      } else {
        expect(shard).toEqual([]);
        expect(classic.length).toBeGreaterThan(0);
      }
    } finally {
      probe.disconnect();
    }
  });

  it('a message sent through one instance reaches sockets on the other, both ways', async () => {
    const sb = await connectSocket(two.baseUrl, bo.token);
    const sc = await connectSocket(two.baseUrl, cy.token);
    const sa = await connectSocket(one.baseUrl, ana.token);
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'across' })).body;
    for (const s of [sa, sb, sc]) await s.waitFor('message.new', isMsg(m.id));
    const back = await sb.emitAck('message.send', { channel_id: ch.id, content: 'back' });
    await sa.waitFor('message.new', isMsg(back.data.id));
  });

  it('a message sent at once after a channel is created or its members change follows the room moves made on the other instance', async () => {
    const dan = await ws.user('dan');
    const sb = await connectSocket(two.baseUrl, bo.token);
    const sc = await connectSocket(two.baseUrl, cy.token);
    const sd = await connectSocket(two.baseUrl, dan.token);
    // no wait between the writes: the sends are committed right after the changes, through instance one
    const fresh = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `f-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const first = (
      await ana.api.post(`/v1/channels/${fresh.id}/messages`, { content: 'first in a new channel' })
    ).body;
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan'] });
    await ws.api.delete(`/v1/channels/${ch.id}/members/cy`);
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello dan' })).body;
    await sb.waitFor('message.new', isMsg(first.id), 5_000);
    await sd.waitFor('message.new', isMsg(m.id), 5_000);
    // the control, committed after m, reaches cy in a channel of hers
    const side = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `side-cy-${Date.now()}`,
      created_by: 'ana',
      member_external_ids: ['cy'],
    });
    const toCy = (await ana.api.post(`/v1/channels/${side.body.id}/messages`, { content: 'control' })).body;
    await sc.expectNoneBefore('message.new', isMsg(m.id), ['message.new', isMsg(toCy.id)]);
  });

  it('a member added or a channel created on one instance reaches the member on the other, where the channel had no socket yet', async () => {
    const [dan, eve] = (await ws.users('dan', 'eve')) as [TestUser, TestUser];
    // dan and eve are connected to instance two only, where no socket is in these channels' rooms yet
    const sd = await connectSocket(two.baseUrl, dan.token);
    const se = await connectSocket(two.baseUrl, eve.token);
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan'] });
    await sd.waitFor('member.added', (e) => e?.channel_id === ch.id, 5_000);
    const created = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `n-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['eve'],
      })
    ).body;
    await se.waitFor('channel.created', (e) => e?.channel_id === created.id, 5_000);
  });

  const onlineVia = async (t: TestApp, who = 'bo') => {
    const res = await new Client(t, ws.api.authorization).get(`/v1/channels/${ch.id}/presence`);
    return res.body.members.find((x: { external_id: string }) => x.external_id === who).online as boolean;
  };
  /** Presence reaches Redis on the next tick of the instance that counted the socket: poll for it. */
  const eventually = async (t: TestApp, online: boolean, who = 'bo') => {
    const deadline = Date.now() + 5_000;
    while ((await onlineVia(t, who)) !== online) {
      if (Date.now() > deadline)
        throw new Error(`${who} not ${online ? 'online' : 'offline'} via ${t.baseUrl}`);
      await sleep(50);
    }
  };

  it('a user with sockets on two instances is online until the last one closes, and only then do partners hear it go offline', async () => {
    const sa = await connectSocket(one.baseUrl, ana.token);
    const b1 = await connectSocket(one.baseUrl, bo.token);
    await sa.waitFor('presence.changed', (e) => e?.data?.external_id === 'bo' && e.data.online === true);
    const b2 = await connectSocket(two.baseUrl, bo.token);
    await eventually(one, true);
    b1.close();
    // well past the offline grace and a tick: bo still has a socket on instance two
    await sleep(OFFLINE_GRACE_MS + 4 * PRESENCE_TICK_MS + 500);
    expect(await onlineVia(one)).toBe(true);
    expect(await onlineVia(two)).toBe(true);
    const offline = () =>
      sa.events.filter(
        (e) =>
          e.name === 'presence.changed' &&
          e.payload?.data?.external_id === 'bo' &&
          e.payload.data.online === false,
      );
    expect(offline()).toEqual([]);
    b2.close();
    const off = await sa.waitFor(
      'presence.changed',
      (e) => e?.data?.external_id === 'bo' && e.data.online === false,
      10_000,
    );
    expect(off.data.last_seen_at).toBeTruthy();
    await eventually(one, false);
    await eventually(two, false);
    // the last word is offline
    const last = sa.events
      .filter((e) => e.name === 'presence.changed' && e.payload?.data?.external_id === 'bo')
      .pop();
    expect(last?.payload.data.online).toBe(false);
  });

  it('presence changes on one instance reach default and batch sockets on the other', async () => {
    const sa = await connectSocket(two.baseUrl, ana.token);
    const sc = new TestSocket(
      io(two.baseUrl, {
        transports: ['websocket'],
        auth: { token: cy.token, presence: 'batch' },
        reconnection: false,
        forceNew: true,
      }),
    );
    await new Promise<void>((resolve, reject) => {
      sc.socket.once('connect', () => resolve());
      sc.socket.once('connect_error', reject);
    });
    try {
      const sb = await connectSocket(one.baseUrl, bo.token);
      await sa.waitFor('presence.changed', (e) => e?.data?.external_id === 'bo' && e.data.online === true);
      await sc.waitFor('presence.batch', (e) => e?.channel_id === ch.id && e.data.online.includes('bo'));
      sb.close();
      const off = await sa.waitFor(
        'presence.changed',
        (e) => e?.data?.external_id === 'bo' && e.data.online === false,
        10_000,
      );
      const batch = await sc.waitFor(
        'presence.batch',
        (e) => e?.data?.offline?.some((u: any) => u.external_id === 'bo'),
        10_000,
      );
      expect(batch.data.offline).toContainEqual({ external_id: 'bo', last_seen_at: off.data.last_seen_at });
      // one presence.changed per change, however many instances there are
      expect(
        sa.events
          .filter((e) => e.name === 'presence.changed' && e.payload?.data?.external_id === 'bo')
          .map((e) => e.payload.data.online),
      ).toEqual([true, false]);
      expect(sc.events.filter((e) => e.name === 'presence.changed')).toEqual([]);
    } finally {
      sc.close();
    }
  });

  it('presence is shared across instances and heals when an instance dies without cleaning up', async () => {
    const sb = await connectSocket(two.baseUrl, bo.token);
    await eventually(one, true);
    // instance two "dies": its heartbeat stops and its counts stay in Redis (the socket is still
    // counted there); instance one must stop trusting them once the heartbeat is stale
    const store: { timer?: NodeJS.Timeout } = two.app.get<PresenceStore, { timer?: NodeJS.Timeout }>(
      PresenceStore,
    );
    clearInterval(store.timer);
    expect(sb.socket.connected).toBe(true);
    const deadline = Date.now() + 25_000;
    let online = true;
    while (Date.now() < deadline && online) {
      await sleep(1000);
      online = await onlineVia(one);
    }
    expect(online).toBe(false);
  }, 40_000);

  it('when the publishing instance loses its database session, the other takes over and no message is lost', async () => {
    const sb = await connectSocket(two.baseUrl, bo.token);
    const sent: string[] = [];
    const send = async (i: number) =>
      sent.push(
        (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: `m${i}` })).body.id as string,
      );
    for (let i = 0; i < 5; i++) await send(i);
    await sb.waitFor('message.new', isMsg(sent[4]!));
    // the leader "dies" as a killed process does: its session ends, and with it the leader lock
    const db = one.app.get(DataSource);
    const [killed] = await db.query<{ n: number }[]>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'chat-service-instance'`,
    );
    expect(killed?.n).toBeGreaterThan(0);
    for (let i = 5; i < 25; i++) {
      await send(i);
      await sleep(50);
    }
    // every message reaches bo once the new leader publishes (a takeover may repeat, never skip)
    await sb.waitFor('message.new', isMsg(sent[24]!), 10_000);
    const got = sb.events
      .filter((e) => e.name === 'message.new' && e.payload?.channel_id === ch.id)
      .map((e) => e.payload.data.id as string);
    expect([...new Set(got)]).toEqual(sent);
  }, 40_000);
});

describe('two deployments (databases of their own) sharing one Redis and key prefix', () => {
  const apps: TestApp[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    closeAllSockets();
    for (const a of apps) await a.close().catch(() => undefined);
    for (const d of drops) await d();
  });

  it('each publishes its own events: leadership is per database, not per Redis', async () => {
    const redisPrefix = `dep${Date.now().toString(36)}:`;
    for (let i = 0; i < 2; i++) {
      const db = await cloneDatabase();
      drops.push(db.drop);
      apps.push(await startTestApp({}, { databaseUrl: db.url, redisPrefix }));
    }
    for (const t of apps) {
      const ws = await newWorkspace(t);
      const [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
      const ch = (
        await ws.api.post('/v1/channels', {
          type: 'group',
          external_id: 'g',
          created_by: 'ana',
          member_external_ids: ['bo'],
        })
      ).body;
      const sb = await connectSocket(t.baseUrl, bo.token);
      const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'mine' })).body;
      await sb.waitFor('message.new', isMsg(m.id), 5_000);
    }
  }, 60_000);
});
