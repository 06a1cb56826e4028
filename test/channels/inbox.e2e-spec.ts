import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { group, Msg, sleep } from '../messages/helpers';

interface InboxChannel {
  id: string;
  unread_count: number;
  mention_unread_count: number;
  last_read_at: string;
  last_message: Msg | null;
}

/**
 * GET /v1/me/channels counts (SPEC.md, CONTRACT §6/§7): messages later than the reader's cursor, not
 * the reader's own, not unsent, not from users the reader blocks. The counts come from counters kept
 * by the send path, so every way a message can stop counting is checked against them.
 */
describe('inbox unread and mention counts', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '1000' });
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
  });

  const inbox = async (u: TestUser, channelId: string): Promise<InboxChannel> => {
    const res = await u.api.get('/v1/me/channels?limit=100');
    expect(res.status).toBe(200);
    const found = (res.body.channels as InboxChannel[]).find((c) => c.id === channelId);
    if (!found) throw new Error(`channel ${channelId} not in the inbox`);
    return found;
  };
  const send = async (u: TestUser, channelId: string, body: Record<string, unknown>): Promise<Msg> => {
    const res = await u.api.post(`/v1/channels/${channelId}/messages`, body);
    expect(res.status).toBe(201);
    return res.body as Msg;
  };

  it("counts others' messages after the cursor, never the reader's own, and resets on read", async () => {
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    await send(bo, ch.id, { content: 'one' });
    await send(ana, ch.id, { content: 'mine' });
    await send(cy, ch.id, { content: 'two @ana', mentions: ['ana'] });
    const last = await send(bo, ch.id, { content: 'three' });
    let c = await inbox(ana, ch.id);
    expect(c.unread_count).toBe(3);
    expect(c.mention_unread_count).toBe(1);
    expect(c.last_message?.id).toBe(last.id);
    expect((await inbox(bo, ch.id)).unread_count).toBe(2);

    expect((await ana.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBe(200);
    c = await inbox(ana, ch.id);
    expect(c.unread_count).toBe(0);
    expect(c.mention_unread_count).toBe(0);
    await sleep(3);
    await send(ana, ch.id, { content: 'after read, mine' });
    await send(cy, ch.id, { content: 'after read' });
    expect((await inbox(ana, ch.id)).unread_count).toBe(1);
  });

  it('leaves out unsent messages, whoever unsent them, and system messages count', async () => {
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    const a = await send(bo, ch.id, { content: 'a' });
    await send(cy, ch.id, { content: 'b @ana', mentions: ['ana'] });
    const c = await send(cy, ch.id, { content: 'c @ana', mentions: ['ana'] });
    const own = await send(ana, ch.id, { content: 'mine' });
    expect((await bo.api.delete(`/v1/messages/${a.id}`)).status).toBe(200);
    expect((await cy.api.delete(`/v1/messages/${c.id}`)).status).toBe(200);
    expect((await ana.api.delete(`/v1/messages/${own.id}`)).status).toBe(200);
    expect(
      (await ws.api.post('/v1/messages', { channel_id: ch.id, system: true, content: 'notice' })).status,
    ).toBe(201);
    const got = await inbox(ana, ch.id);
    expect(got.unread_count).toBe(2); // 'b' and the notice
    expect(got.mention_unread_count).toBe(1); // 'b'
  });

  it("leaves out a blocked user's messages (unsent or not) and shows the last message the reader may see", async () => {
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    await send(cy, ch.id, { content: 'visible' });
    const hidden = await send(bo, ch.id, { content: 'hidden 1' });
    await send(bo, ch.id, { content: 'hidden 2 @ana', mentions: ['ana'] });
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
    expect((await bo.api.delete(`/v1/messages/${hidden.id}`)).status).toBe(200);
    const got = await inbox(ana, ch.id);
    expect(got.unread_count).toBe(1);
    expect(got.mention_unread_count).toBe(0);
    expect(got.last_message?.content).toBe('visible');
    // cy blocks nobody: sees all three, the unsent one not counted
    expect((await inbox(cy, ch.id)).unread_count).toBe(1);
    expect((await ana.api.delete('/v1/me/blocks/bo')).status).toBe(204);
    expect((await inbox(ana, ch.id)).unread_count).toBe(2);
  });

  it('a member who leaves and comes back counts only what came after the return', async () => {
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    await send(bo, ch.id, { content: 'before' });
    await send(cy, ch.id, { content: 'before too' });
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/bo`)).status).toBe(204);
    await send(cy, ch.id, { content: 'while away' });
    expect((await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['bo'] })).status).toBe(
      200,
    );
    await sleep(3);
    expect((await inbox(bo, ch.id)).unread_count).toBe(0);
    await send(bo, ch.id, { content: 'mine again' });
    await send(cy, ch.id, { content: 'after return' });
    await send(ana, ch.id, { content: 'and another' });
    expect((await inbox(bo, ch.id)).unread_count).toBe(2);
    expect((await inbox(ana, ch.id)).unread_count).toBe(5);
  });
});
