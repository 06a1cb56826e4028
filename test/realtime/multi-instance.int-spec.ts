import { randomBytes } from 'crypto';
import { PresenceStore } from '../../src/realtime/presence.store';
import { cloneDatabase } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { Client, newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep } from '../support/socket';

const isMsg = (id: string) => (e: any) => e?.data?.id === id;

describe('two instances on PostgreSQL + Redis', () => {
  let one: TestApp;
  let two: TestApp;
  let drop: () => Promise<void>;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    const db = await cloneDatabase();
    drop = db.drop;
    const shared = { databaseUrl: db.url, redisPrefix: `mi${Date.now().toString(36)}:` };
    const env = { SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    one = await startTestApp(env, shared);
    two = await startTestApp(env, shared);
  });
  afterAll(async () => {
    closeAllSockets();
    await one.close();
    await two.close().catch(() => undefined);
    await drop();
  });
  beforeEach(async () => {
    ws = await newWorkspace(one);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = (await ws.api.post('/v1/channels', { type: 'group', external_id: `g-${Date.now()}`, created_by: 'ana', member_external_ids: ['bo', 'cy'] })).body;
  });
  afterEach(() => closeAllSockets());

  it('a message sent through one instance reaches sockets on the other, both ways', async () => {
    const sb = await connectSocket(two.baseUrl, bo.token);
    const sc = await connectSocket(two.baseUrl, cy.token);
    const sa = await connectSocket(one.baseUrl, ana.token);
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'across' })).body;
    for (const s of [sa, sb, sc]) await s.waitFor('message.new', isMsg(m.id));
    const back = await sb.emitAck('message.send', { channel_id: ch.id, content: 'back' });
    await sa.waitFor('message.new', isMsg(back.data.id));
  });

  it('membership changes made on one instance move sockets on the other', async () => {
    const dan = await ws.user('dan');
    const sd = await connectSocket(two.baseUrl, dan.token);
    const sc = await connectSocket(two.baseUrl, cy.token);
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan'] });
    await ws.api.delete(`/v1/channels/${ch.id}/members/cy`);
    await sleep(300);
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello dan' })).body;
    await sd.waitFor('message.new', isMsg(m.id));
    await sc.expectNone('message.new', isMsg(m.id));
  });

  it('presence is shared across instances and heals when an instance dies without cleaning up', async () => {
    const sb = await connectSocket(two.baseUrl, bo.token);
    const onlineVia = async (t: TestApp) => {
      const res = await new Client(t, ws.api.authorization).get(`/v1/channels/${ch.id}/presence`);
      return res.body.members.find((x: { external_id: string }) => x.external_id === 'bo').online as boolean;
    };
    await sleep(200);
    expect(await onlineVia(one)).toBe(true);
    // instance two "dies": its heartbeat stops and its counts stay in Redis (the socket is still
    // counted there); instance one must stop trusting them once the heartbeat is stale
    const store: { timer?: NodeJS.Timeout } = two.app.get<PresenceStore, { timer?: NodeJS.Timeout }>(PresenceStore);
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
});
