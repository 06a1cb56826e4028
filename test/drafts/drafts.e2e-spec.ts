import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket } from '../support/socket';
import { group } from '../messages/helpers';

interface DraftView {
  channel_id: string;
  channel_external_id: string;
  thread_id: string | null;
  parent_id: string | null;
  content: string;
  attachment_url: string | null;
  mentions: string[];
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** CONTRACT §24: drafts, on the embedded database and (test:integration) on PostgreSQL. */
describe('drafts', () => {
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
    ch = await group(ws, 'ana', ['bo']);
  });
  afterEach(() => closeAllSockets());

  const path = (c: { id: string } = ch) => `/v1/channels/${c.id}/draft`;
  const send = async (u: TestUser, content: string, extra: Record<string, unknown> = {}) => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, { content, ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; created_at: string };
  };
  const draftOf = async (u: TestUser, threadId?: string) =>
    u.api.get(threadId ? `${path()}?thread_id=${threadId}` : path());

  it('saves (201), replaces (200) and reads a draft; channel and thread drafts are separate; empty content and DELETE delete', async () => {
    const root = await send(bo, 'root');
    const first = await ana.api.put(path(), { content: 'hello wor', mentions: ['bo'], metadata: { k: 1 } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      thread_id: null,
      parent_id: null,
      content: 'hello wor',
      attachment_url: null,
      mentions: ['bo'],
      metadata: { k: 1 },
      created_at: expect.stringMatching(/Z$/),
      updated_at: first.body.created_at,
    });
    const second = await ana.api.put(path(), { content: 'hello world', parent_id: root.id });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      content: 'hello world',
      parent_id: root.id,
      mentions: [],
      metadata: {},
    });
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(Date.parse(second.body.updated_at)).toBeGreaterThan(Date.parse(first.body.updated_at));
    expect((await draftOf(ana)).body).toEqual(second.body);

    const inThread = await ana.api.put(path(), { content: 'in the thread', thread_id: root.id });
    expect(inThread.status).toBe(201);
    expect((await draftOf(ana, root.id)).body.content).toBe('in the thread');
    expect((await draftOf(ana)).body.content).toBe('hello world');

    expect((await ana.api.put(path(), { content: '  \n ', thread_id: root.id })).status).toBe(204);
    expect((await draftOf(ana, root.id)).status).toBe(404);
    expect((await ana.api.delete(path())).status).toBe(204);
    expect((await ana.api.delete(path())).status).toBe(204);
    const none = await draftOf(ana);
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('NOT_FOUND');
  });

  it('checks a save as a send (members, size, thread root, parent, mentions, attachment, metadata) and keeps drafts private', async () => {
    const other = await group(ws, 'cy', []);
    const elsewhere = (await cy.api.post(`/v1/channels/${other.id}/messages`, { content: 'x' })).body;
    const root = await send(bo, 'root');
    const reply = await send(bo, 'reply', { thread_id: root.id });
    const refused: [TestUser, Record<string, unknown>, number, string][] = [
      [cy, { content: 'not mine' }, 403, 'NOT_A_MEMBER'],
      [ana, { content: 'x', mentions: ['cy'] }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'x', thread_id: reply.id }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'x', thread_id: elsewhere.id }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'x', parent_id: elsewhere.id }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'x', attachment_url: 'https://evil.example/x.png' }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'x', metadata: { big: 'y'.repeat(5000) } }, 400, 'VALIDATION_ERROR'],
      [ana, { content: 'y'.repeat(8193) }, 413, 'MESSAGE_TOO_LARGE'],
      [ana, { content: '', thread_id: 'not-a-message' }, 400, 'VALIDATION_ERROR'],
      [ana, { thread_id: root.id }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [u, body, status, code] of refused) {
      const res = await u.api.put(path(), body);
      expect([JSON.stringify(body).slice(0, 60), res.status, res.body.error?.code]).toEqual([
        JSON.stringify(body).slice(0, 60),
        status,
        code,
      ]);
    }
    expect((await draftOf(ana)).status).toBe(404);
    expect((await ana.api.get(`${path()}?thread_id=nope`)).status).toBe(400);

    // a frozen channel still takes drafts (not a send)
    expect((await ws.api.patch(`/v1/channels/${ch.id}`, { frozen: true })).status).toBe(200);
    expect((await ana.api.put(path(), { content: 'frozen but mine' })).status).toBe(201);

    // private: bo has none of his own, the backend key may not look, nor list
    expect((await draftOf(bo)).status).toBe(404);
    expect((await bo.api.get('/v1/me/drafts')).body.drafts).toEqual([]);
    expect((await ws.api.get(path())).status).toBe(403);
    expect((await ws.api.put(path(), { content: 'x' })).status).toBe(403);
    expect((await ws.api.get('/v1/me/drafts')).status).toBe(403);
  });

  it('tells the owner’s sockets (another device) and sync, and nobody else', async () => {
    const [phone, laptop, bos] = await Promise.all([
      connectSocket(t.baseUrl, ana.token),
      connectSocket(t.baseUrl, ana.token),
      connectSocket(t.baseUrl, bo.token),
    ]);
    const since = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
    const sinceBo = (await bo.api.get('/v1/me/sync')).body.next_cursor as string;
    const saved = (await ana.api.put(path(), { content: 'draft-secret' })).body as DraftView;
    const updated = await laptop.waitFor('draft.updated', (e) => e?.data?.draft?.content === 'draft-secret');
    expect(updated).toMatchObject({ type: 'draft.updated', channel_id: ch.id, data: { draft: saved } });
    expect(updated.seq).toBeUndefined();
    await phone.waitFor('draft.updated');
    expect((await ana.api.delete(path())).status).toBe(204);
    const deleted = await laptop.waitFor('draft.deleted');
    expect(deleted.data).toEqual({ channel_id: ch.id, thread_id: null });

    const anaSync = (await ana.api.get(`/v1/me/sync?since=${since}`)).body.events as { type: string }[];
    expect(anaSync.map((e) => e.type)).toEqual(['draft.updated', 'draft.deleted']);
    // bo: nothing, judged after a message that reached him
    const control = await send(ana, 'control');
    await bos.expectNoneBefore('draft.updated', () => true, [
      'message.new',
      (e) => e?.data?.id === control.id,
    ]);
    expect(bos.events.filter((e) => e.name.startsWith('draft.'))).toEqual([]);
    const boSync = (await bo.api.get(`/v1/me/sync?since=${sinceBo}`)).body.events as { type: string }[];
    expect(JSON.stringify(boSync)).not.toContain('draft-secret');
    expect(boSync.filter((e) => e.type.startsWith('draft.'))).toEqual([]);
  });

  it('a stored send deletes the matching draft (REST, thread, socket, backend as the user); a replay deletes nothing', async () => {
    const s = await connectSocket(t.baseUrl, ana.token);
    const root = await send(bo, 'root');
    await ana.api.put(path(), { content: 'channel draft' });
    await ana.api.put(path(), { content: 'thread draft', thread_id: root.id });
    await bo.api.put(path(), { content: 'bo draft' });

    // a thread reply deletes the thread draft only
    await send(ana, 'reply', { thread_id: root.id });
    expect((await draftOf(ana, root.id)).status).toBe(404);
    expect((await draftOf(ana)).body.content).toBe('channel draft');
    const gone = await s.waitFor('draft.deleted', (e) => e?.data?.thread_id === root.id);
    expect(gone).toMatchObject({ channel_id: ch.id, data: { channel_id: ch.id, thread_id: root.id } });

    // a send into the channel deletes the channel draft, not another user's
    const sent = await send(ana, 'sent', { idempotency_key: 'k1' });
    expect((await draftOf(ana)).status).toBe(404);
    await s.waitFor('draft.deleted', (e) => e?.data?.thread_id === null);
    expect((await draftOf(bo)).body.content).toBe('bo draft');

    // a replay of that send deletes nothing
    await ana.api.put(path(), { content: 'typed after' });
    const replay = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
      content: 'sent',
      idempotency_key: 'k1',
    });
    expect([replay.status, replay.body.id]).toEqual([200, sent.id]);
    expect((await draftOf(ana)).body.content).toBe('typed after');

    // over the socket
    const ack = await s.emitAck('message.send', { channel_id: ch.id, content: 'by socket' });
    expect(ack.ok).toBe(true);
    expect((await draftOf(ana)).status).toBe(404);

    // the backend sending as ana
    await ana.api.put(path(), { content: 'again' });
    const backend = await ws.api.post('/v1/messages', {
      channel_id: ch.id,
      user_external_id: 'ana',
      content: 'as ana',
    });
    expect(backend.status).toBe(201);
    expect((await draftOf(ana)).status).toBe(404);
    expect((await draftOf(bo)).body.content).toBe('bo draft');
  });

  it('concurrent sends of many users, batched together, each delete their own draft', async () => {
    const users = await ws.users(...Array.from({ length: 8 }, (_, i) => `u${i}`));
    const big = await group(
      ws,
      'ana',
      users.map((u) => u.external_id),
    );
    for (const u of users)
      expect((await u.api.put(path(big), { content: `draft of ${u.external_id}` })).status).toBe(201);
    const sent = await Promise.all(
      users.flatMap((u) =>
        [0, 1].map((i) => u.api.post(`/v1/channels/${big.id}/messages`, { content: `m${i}` })),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(sent.map(() => 201));
    for (const u of users) expect((await u.api.get(path(big))).status).toBe(404);
    expect((await ana.api.put(path(big), { content: 'ana stays' })).status).toBe(201);
  });

  it('an erasure removes the user’s drafts with the user', async () => {
    expect((await bo.api.put(path(), { content: 'bo was here' })).status).toBe(201);
    expect((await ana.api.put(path(), { content: 'ana stays' })).status).toBe(201);
    const db = t.app.get(DataSource);
    const count = async (userId: string) =>
      Number((await db.query(`SELECT count(*)::int AS n FROM drafts WHERE user_id = $1`, [userId]))[0].n);
    expect(await count(bo.id)).toBe(1);
    const root = await send(bo, 'bo asks');
    expect((await ana.api.put(path(), { content: 'ana answers', thread_id: root.id })).status).toBe(201);
    // bo's messages removed outright: ana's draft of his thread goes with its root
    expect((await ws.api.delete('/v1/users/bo?messages=delete')).status).toBeLessThan(300);
    expect(await count(bo.id)).toBe(0);
    expect((await draftOf(ana)).body.content).toBe('ana stays');
    expect((await draftOf(ana, root.id)).status).toBe(404);
  });

  it('lists drafts newest first with pages and a channel filter; leaving, removal and deletion of a channel delete its drafts', async () => {
    const chs = [ch, await group(ws, 'bo', ['ana']), await group(ws, 'bo', ['ana'])];
    for (const [i, c] of chs.entries())
      expect((await ana.api.put(path(c), { content: `d${i}` })).status).toBe(201);
    await ana.api.put(path(chs[0]), { content: 'd0 edited' });
    const all = (await ana.api.get('/v1/me/drafts')).body;
    expect(all.drafts.map((d: DraftView) => d.content)).toEqual(['d0 edited', 'd2', 'd1']);
    const p1 = (await ana.api.get('/v1/me/drafts?limit=2')).body;
    expect([p1.drafts.map((d: DraftView) => d.content), p1.has_more]).toEqual([['d0 edited', 'd2'], true]);
    const p2 = (await ana.api.get(`/v1/me/drafts?limit=2&before=${p1.next_cursor}`)).body;
    expect([p2.drafts.map((d: DraftView) => d.content), p2.has_more, p2.next_cursor]).toEqual([
      ['d1'],
      false,
      null,
    ]);
    const only = (await ana.api.get(`/v1/me/drafts?channel=${chs[2]!.external_id}`)).body;
    expect(only.drafts.map((d: DraftView) => d.content)).toEqual(['d2']);
    expect((await ana.api.get('/v1/me/drafts?before=garbage')).status).toBe(400);

    expect((await ana.api.delete(`/v1/me/channels/${chs[1]!.id}/members/ana`)).status).toBeLessThan(300);
    expect((await ws.api.delete(`/v1/channels/${chs[2]!.id}/members/ana`)).status).toBeLessThan(300);
    expect(((await ana.api.get('/v1/me/drafts')).body.drafts as DraftView[]).map((d) => d.content)).toEqual([
      'd0 edited',
    ]);
    expect((await ws.api.delete(`/v1/channels/${ch.id}`)).status).toBeLessThan(300);
    expect((await ana.api.get('/v1/me/drafts')).body.drafts).toEqual([]);
  });
});
