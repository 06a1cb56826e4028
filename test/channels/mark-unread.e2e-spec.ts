import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket } from '../support/socket';

interface Sent {
  id: string;
  created_at: string;
}

/** CONTRACT §22: mark unread, on the embedded database and (test:integration) on PostgreSQL. */
describe('mark unread (POST /v1/channels/:id/unread)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

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
  });
  afterEach(() => closeAllSockets());

  const send = async (u: TestUser, content: string, extra: Record<string, unknown> = {}): Promise<Sent> => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, { content, ...extra });
    expect(res.status).toBe(201);
    return res.body as Sent;
  };
  const unread = (u: TestUser, body: Record<string, unknown>) =>
    u.api.post(`/v1/channels/${ch.id}/unread`, body);
  const mine = async (u: TestUser) => {
    const one = await u.api.get(`/v1/me/channels/${ch.id}`);
    expect(one.status).toBe(200);
    const list = await u.api.get('/v1/me/channels');
    const entry = (list.body.channels as { id: string }[]).find((c) => c.id === ch.id);
    // the one-channel view is the list's entry
    expect(one.body).toEqual(entry);
    return one.body as { unread_count: number; mention_unread_count: number; last_read_at: string };
  };
  const lessOneMs = (iso: string) => new Date(Date.parse(iso) - 1).toISOString();

  it('moves the read position to just before the message: it and every later message count again, the counts agree everywhere', async () => {
    const m: Sent[] = [];
    for (let i = 1; i <= 5; i++) m.push(await send(bo, `m${i}`, i === 4 ? { mentions: ['ana'] } : {}));
    expect((await ana.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBe(200);
    expect(await mine(ana)).toMatchObject({ unread_count: 0, mention_unread_count: 0 });

    const res = await unread(ana, { message_id: m[2]!.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      channel_id: ch.id,
      thread_id: null,
      message_id: m[2]!.id,
      last_read_at: lessOneMs(m[2]!.created_at),
      unread_count: 3,
      mention_unread_count: 1,
    });
    expect(await mine(ana)).toMatchObject({
      unread_count: 3,
      mention_unread_count: 1,
      last_read_at: lessOneMs(m[2]!.created_at),
    });

    // own messages never count, later ones from others do
    await send(ana, 'mine');
    await send(cy, 'later');
    expect(await mine(ana)).toMatchObject({ unread_count: 4 });
    // marking the oldest message unread: all five of bo's and cy's count
    expect((await unread(ana, { message_id: m[0]!.id })).body.unread_count).toBe(6);

    // the caller's own message is accepted: later messages count, it does not
    const own = await send(ana, 'own');
    const after = await send(bo, 'after own');
    const fromOwn = await unread(ana, { message_id: own.id });
    expect(fromOwn.status).toBe(200);
    expect(fromOwn.body.unread_count).toBe(1);
    expect(after.id).toBeDefined();

    // the next mark read moves the position to now, as before
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});
    expect(await mine(ana)).toMatchObject({ unread_count: 0, mention_unread_count: 0 });
  });

  it('never moves receipts back for others, broadcasts nothing to them, and tells the caller’s own sockets', async () => {
    const [sa, sb] = await Promise.all([
      connectSocket(t.baseUrl, ana.token),
      connectSocket(t.baseUrl, bo.token),
    ]);
    const m1 = await send(bo, 'one');
    const m2 = await send(bo, 'two');
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});
    await cy.api.post(`/v1/channels/${ch.id}/read`, {});
    // both reads reached bo (in seq order: cy's is the later one)
    await sb.waitFor('channel.read', (e) => e?.data?.external_id === 'cy');
    const readsSeen = sb.events.filter((e) => e.name === 'channel.read').length;
    const receiptsBefore = (await bo.api.get(`/v1/channels/${ch.id}/receipts`)).body;

    const res = await unread(ana, { message_id: m1.id });
    expect(res.status).toBe(200);
    const env = await sa.waitFor('notification.mark_unread', (e) => e?.data?.message_id === m1.id);
    expect(env).toMatchObject({ type: 'notification.mark_unread', channel_id: ch.id, data: res.body });
    expect(env.seq).toBeUndefined();

    // receipts and receipt_status keep the highest read position
    expect((await bo.api.get(`/v1/channels/${ch.id}/receipts`)).body).toEqual(receiptsBefore);
    const history = (await bo.api.get(`/v1/channels/${ch.id}/messages?limit=10`)).body.messages as {
      id: string;
      receipt_status: string;
    }[];
    expect(history.find((x) => x.id === m2.id)?.receipt_status).toBe('read');

    // nothing reached bo: judged after a control message that did
    const control = await send(cy, 'control');
    await sb.expectNoneBefore('notification.mark_unread', () => true, [
      'message.new',
      (e) => e?.data?.id === control.id,
    ]);
    expect(sb.events.filter((e) => e.name === 'channel.read').length).toBe(readsSeen);

    // sync carries it to ana only
    const since = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
    const sinceBo = (await bo.api.get('/v1/me/sync')).body.next_cursor as string;
    await unread(ana, { message_id: m2.id });
    const anaSync = (await ana.api.get(`/v1/me/sync?since=${since}`)).body.events as { type: string }[];
    expect(anaSync.map((e) => e.type)).toContain('notification.mark_unread');
    const boSync = (await bo.api.get(`/v1/me/sync?since=${sinceBo}`)).body.events as { type: string }[];
    expect(boSync.map((e) => e.type)).not.toContain('notification.mark_unread');
  });

  it('acts for a user named by a backend key, and refuses what the contract refuses without changing anything', async () => {
    const m1 = await send(bo, 'one');
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});
    const asBackend = await ws.api.post(`/v1/channels/${ch.id}/unread`, {
      message_id: m1.id,
      user_external_id: 'ana',
    });
    expect(asBackend.status).toBe(200);
    expect(asBackend.body.unread_count).toBe(1);
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});

    const root = await send(bo, 'root');
    const threadOnly = await send(bo, 'in the thread', { thread_id: root.id });
    const unsent = await send(bo, 'unsent');
    expect((await bo.api.delete(`/v1/messages/${unsent.id}`)).status).toBe(200);
    const fromCy = await send(cy, 'from cy');
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'cy' })).status).toBe(201);
    const other = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `o-${Date.now()}`,
        created_by: 'bo',
        member_external_ids: ['ana'],
      })
    ).body;
    const elsewhere = (await bo.api.post(`/v1/channels/${other.id}/messages`, { content: 'elsewhere' }))
      .body as Sent;
    const dan = await ws.user('dan');
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});
    expect(await mine(ana)).toMatchObject({ unread_count: 0 });

    const cases: [TestUser | null, Record<string, unknown>, number, string][] = [
      [ana, {}, 400, 'VALIDATION_ERROR'],
      [null, { message_id: m1.id }, 400, 'VALIDATION_ERROR'], // a backend key without user_external_id
      [ana, { message_id: '00000000-0000-7000-8000-000000000000' }, 404, 'NOT_FOUND'],
      [ana, { message_id: 'not-a-message' }, 404, 'NOT_FOUND'],
      [ana, { message_id: elsewhere.id }, 404, 'NOT_FOUND'],
      [ana, { message_id: fromCy.id }, 404, 'NOT_FOUND'], // hidden by ana's block
      [ana, { message_id: threadOnly.id }, 400, 'VALIDATION_ERROR'],
      [ana, { message_id: unsent.id }, 422, 'MESSAGE_DELETED'],
      [dan, { message_id: m1.id }, 403, 'NOT_A_MEMBER'],
    ];
    for (const [who, body, status, code] of cases) {
      const res = who ? await unread(who, body) : await ws.api.post(`/v1/channels/${ch.id}/unread`, body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([
        JSON.stringify(body),
        status,
        code,
      ]);
    }
    // nothing moved
    expect(await mine(ana)).toMatchObject({ unread_count: 0 });
    expect((await dan.api.get(`/v1/me/channels/${ch.id}`)).status).toBe(403);
    expect((await ana.api.get('/v1/me/channels/no-such-channel')).status).toBe(404);
  });
});
