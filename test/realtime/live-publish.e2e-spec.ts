import { ChannelWrites } from '../../src/channels/writes';
import { LivePublish, ROOM_MOVE_GRACE_MS } from '../../src/events/live-publish';
import { LIVE_GRACE_MS, RealtimePublisher } from '../../src/realtime/realtime.publisher';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

/**
 * A send is published by the instance that committed it, at once, and the log's publisher skips it;
 * the publisher still sends what no instance published (the safety net). Both modes.
 */
describe('live publish of sends', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `g-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo', 'cy'],
      })
    ).body;
    // sends right after the members changed go through the log (ROOM_MOVE_GRACE_MS); these are about the live path
    await sleep(ROOM_MOVE_GRACE_MS);
  });
  afterEach(() => closeAllSockets());

  const sock = (u: TestUser) => connectSocket(t.baseUrl, u.token);
  /** What the sends fire on a channel's sockets (a socket connected just after the channel was made may also get its creation). */
  const SEND_EVENTS = new Set(['message.new', 'message.mentioned']);
  const channelEvents = (s: TestSocket) =>
    s.events.filter((e) => SEND_EVENTS.has(e.name) && e.payload?.channel_id === ch.id);

  /** Waits past the publisher's grace and a pass, then for a control event that went through the log's publisher. */
  const settle = async (sockets: TestSocket[]) => {
    await sleep(LIVE_GRACE_MS + 1_200);
    await ws.api.patch(`/v1/channels/${ch.id}`, { name: `control ${Date.now()}` });
    for (const s of sockets) await s.waitFor('channel.updated', (e) => e?.channel_id === ch.id, 10_000);
  };

  it('delivers each send once, with the envelope catch-up returns for its seq, in seq order', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    const ids: string[] = [];
    // REST and socket sends, some concurrent, one with a mention (message.created and message.mentioned)
    ids.push((await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'one' })).body.id);
    const acks = await Promise.all([
      sa.emitAck('message.send', { channel_id: ch.id, content: 'two' }),
      bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'three', mentions: ['ana'] }),
      sb.emitAck('message.send', { channel_id: ch.id, content: 'four' }),
    ]);
    ids.push(acks[0].data.id, acks[1].body.id, acks[2].data.id);
    await settle([sa, sb]);

    const caughtUp = await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=0&limit=100`);
    expect(caughtUp.status).toBe(200);
    const logged = (caughtUp.body.events as any[]).filter((e) => SEND_EVENTS.has(e.type));
    for (const s of [sa, sb]) {
      const live = channelEvents(s).map((e) => e.payload);
      // everything the log has for these sends arrived, exactly once, in seq order
      expect(live.map((e) => e.seq)).toEqual(logged.map((e) => e.seq));
      expect(live.map((e) => e.type)).toEqual(logged.map((e) => e.type));
      // the same envelope as catch-up: one shape whichever path carried it
      for (const [i, e] of live.entries())
        expect({ ...e, ts: undefined }).toEqual({ ...logged[i], created_at: undefined, v: 1, ts: undefined });
      expect(
        live
          .filter((e) => e.type === 'message.new')
          .map((e) => e.data.id)
          .sort(),
      ).toEqual([...ids].sort());
    }
    expect(
      sa.events.filter((e) => e.name === 'notification.mention').map((e) => e.payload.data.message.id),
    ).toEqual([acks[1].body.id]);
    // and the log's publisher left them to the live path
    const metrics = (await t.http().get('/metrics')).text;
    expect(Number(/^chat_realtime_live_sends_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(4);
  });

  it('leaves blockers out and tells only the author of a shadow-banned send', async () => {
    expect((await cy.api.post('/v1/me/blocks', { external_id: 'ana' })).status).toBe(201);
    const [sa, sb, sc] = await Promise.all([sock(ana), sock(bo), sock(cy)]);
    const seen = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'not for cy' })).body.id;
    expect((await ws.api.post('/v1/users/bo/ban', { shadow: true })).status).toBeLessThan(300);
    const shadowed = (await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'only bo' })).body.id;
    await settle([sa, sb, sc]);
    const got = (s: TestSocket) =>
      s.events.filter((e) => e.name === 'message.new').map((e) => e.payload.data.id);
    expect(got(sa)).toEqual([seen]);
    expect(got(sb)).toEqual([seen, shadowed]);
    expect(got(sc)).toEqual([]);
  });

  it('a send committed but never published by its instance reaches every member through the log, once', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    const live = t.app.get(LivePublish);
    const committed = live.committed.bind(live);
    // the instance "dies" between commit and publish: no live publish, no note
    live.committed = (token, channelId) => live.release(token, channelId);
    let lost: string;
    try {
      lost = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'no note' })).body.id;
    } finally {
      live.committed = committed;
    }
    const after = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'next' })).body.id;
    await settle([sa, sb]);
    for (const s of [sa, sb]) {
      const news = s.events.filter((e) => e.name === 'message.new').map((e) => e.payload.data.id);
      expect(news.sort()).toEqual([lost, after].sort());
    }
  });
  it("a committed send whose live render fails is still answered 201, and the log's publisher delivers it once", async () => {
    const sb = await sock(bo);
    const writes = t.app.get(ChannelWrites);
    const send = writes.send.bind(writes);
    writes.send = (ctx, msg, events) =>
      send(ctx, msg, events, () => {
        throw new Error('a rendering bug');
      });
    let id: string;
    try {
      const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'stored, then a render failed',
      });
      expect(res.status).toBe(201);
      id = res.body.id;
    } finally {
      writes.send = send;
    }
    await settle([sb]);
    expect(channelEvents(sb).map((e) => e.payload.data.id)).toEqual([id]);
  });

  it('a publisher pass whose emits fail reads its events again: the socket gets them once, in order', async () => {
    const sb = await sock(bo);
    const publisher: { publish: (reads: unknown[]) => Promise<void> } = t.app.get<unknown>(
      RealtimePublisher,
    ) as never;
    const publish = publisher.publish.bind(publisher);
    let failures = 0;
    publisher.publish = async (reads) => {
      if (reads.length && failures === 0) {
        failures++;
        throw new Error('the adapter refused');
      }
      return publish(reads);
    };
    try {
      // not sends (published live): channel events only the log's publisher sends
      for (const name of ['first', 'second'])
        expect((await ws.api.patch(`/v1/channels/${ch.id}`, { name })).status).toBe(200);
      await sb.waitFor(
        'channel.updated',
        (e) => e?.channel_id === ch.id && e?.data?.channel?.name === 'second',
        10_000,
      );
    } finally {
      publisher.publish = publish;
    }
    expect(failures).toBe(1);
    const names = sb.events
      .filter((e) => e.name === 'channel.updated' && e.payload?.channel_id === ch.id)
      .map((e) => e.payload.data.channel.name);
    expect(names).toEqual(['first', 'second']);
  });
});
