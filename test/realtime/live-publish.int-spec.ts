import { ROOM_MOVE_GRACE_MS } from '../../src/events/live-publish';
import { LIVE_GRACE_MS } from '../../src/realtime/realtime.publisher';
import { startTwoInstances, TestApp } from '../support/app';
import { Client, newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

/**
 * Two instances, one PostgreSQL and one Redis: each publishes the sends it commits live, one of them
 * also leads the log's publisher, and the notes through Redis keep it from publishing them again.
 */
describe.each(['classic', 'sharded'])('live publish across two instances (%s adapter)', (adapter) => {
  let one: TestApp;
  let two: TestApp;
  let close: () => Promise<void>;
  let ws: TestWorkspace;
  let users: TestUser[];
  let ch: { id: string };

  beforeAll(async () => {
    ({ one, two, close } = await startTwoInstances('lp', { SERVICE_REDIS_ADAPTER: adapter }));
  });
  afterAll(async () => {
    closeAllSockets();
    await close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(one);
    users = await ws.users('ana', 'bo', 'cy', 'dan');
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `g-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo', 'cy', 'dan'],
      })
    ).body;
    // sends right after the members changed go through the log (ROOM_MOVE_GRACE_MS); these are about the live path
    await sleep(ROOM_MOVE_GRACE_MS);
  });
  afterEach(() => closeAllSockets());

  const liveSends = async (t: TestApp) =>
    Number(/^chat_realtime_live_sends_total (\d+)/m.exec((await t.http().get('/metrics')).text)?.[1] ?? 0);

  it('every send reaches every socket on both instances exactly once, whichever instance committed it', async () => {
    const [ana, bo, cy, dan] = users as [TestUser, TestUser, TestUser, TestUser];
    const sockets: TestSocket[] = await Promise.all([
      connectSocket(one.baseUrl, ana.token),
      connectSocket(two.baseUrl, bo.token),
      connectSocket(one.baseUrl, cy.token),
      connectSocket(two.baseUrl, dan.token),
    ]);
    const before = [await liveSends(one), await liveSends(two)];
    const via = (t: TestApp, u: TestUser) => new Client(t, u.api.authorization);
    const sent: string[] = [];
    // 4 rounds of 4 concurrent sends, half through each instance, REST and sockets
    for (let round = 0; round < 4; round++) {
      const rest = await Promise.all([
        via(one, ana).post(`/v1/channels/${ch.id}/messages`, { content: `a${round}` }),
        via(two, bo).post(`/v1/channels/${ch.id}/messages`, { content: `b${round}` }),
      ]);
      const acks = await Promise.all([
        sockets[2]!.emitAck('message.send', { channel_id: ch.id, content: `c${round}` }),
        sockets[3]!.emitAck('message.send', { channel_id: ch.id, content: `d${round}` }),
      ]);
      sent.push(...rest.map((r) => r.body.id as string), ...acks.map((a) => a.data.id as string));
    }
    // past the publisher's grace, then a control event through the log's publisher
    await sleep(LIVE_GRACE_MS + 1_500);
    await ws.api.patch(`/v1/channels/${ch.id}`, { name: 'control' });
    for (const s of sockets) await s.waitFor('channel.updated', (e) => e?.channel_id === ch.id, 15_000);
    for (const s of sockets) {
      const news = s.events.filter((e) => e.name === 'message.new' && e.payload.channel_id === ch.id);
      expect(news.map((e) => e.payload.data.id).sort()).toEqual([...sent].sort());
      expect(new Set(news.map((e) => e.payload.seq)).size).toBe(sent.length);
    }
    // both instances published their own sends live
    expect((await liveSends(one)) - before[0]!).toBe(8);
    expect((await liveSends(two)) - before[1]!).toBe(8);
  });
});
