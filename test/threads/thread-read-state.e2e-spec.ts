import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket } from '../support/socket';
import { group } from '../messages/helpers';

interface Sent {
  id: string;
  created_at: string;
  thread?: ThreadState;
}
interface ThreadState {
  participant: boolean;
  unread_replies: number;
  last_read_at: string | null;
}

const lessOneMs = (iso: string) => new Date(Date.parse(iso) - 1).toISOString();

/** CONTRACT §23: thread read state, on the embedded database and (test:integration) on PostgreSQL. */
describe('thread read state', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser, dan: TestUser;
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
    [ana, bo, cy, dan] = (await ws.users('ana', 'bo', 'cy', 'dan')) as [
      TestUser,
      TestUser,
      TestUser,
      TestUser,
    ];
    ch = await group(ws, 'ana', ['bo', 'cy', 'dan']);
  });
  afterEach(() => closeAllSockets());

  const send = async (u: TestUser, content: string, extra: Record<string, unknown> = {}): Promise<Sent> => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, { content, ...extra });
    expect(res.status).toBe(201);
    return res.body as Sent;
  };
  const reply = (u: TestUser, root: Sent, content: string, extra: Record<string, unknown> = {}) =>
    send(u, content, { thread_id: root.id, ...extra });
  /** The root's `thread` as the user's history shows it. */
  const stateOf = async (u: TestUser, root: Sent): Promise<ThreadState> => {
    const h = await u.api.get(`/v1/channels/${ch.id}/messages?limit=100`);
    const m = (h.body.messages as (Sent & { thread?: ThreadState })[]).find((x) => x.id === root.id);
    expect(m?.thread).toBeDefined();
    return m!.thread!;
  };
  const unreadOf = async (u: TestUser, root: Sent) => (await stateOf(u, root)).unread_replies;
  const inbox = async (u: TestUser) => (await u.api.get(`/v1/me/channels/${ch.id}`)).body;

  it('counts others’ live replies after each participant’s cursor: author, repliers, mentioned users; never the user’s own, blocked or unsent ones', async () => {
    const root = await send(ana, 'root, for @cy', { mentions: ['cy'] });
    // the send answers the author's own state
    expect(root.thread).toEqual({ participant: true, unread_replies: 0, last_read_at: root.created_at });
    expect(await stateOf(cy, root)).toEqual({
      participant: true,
      unread_replies: 0,
      last_read_at: lessOneMs(root.created_at),
    });
    const r1 = await reply(bo, root, 'r1');
    const r2 = await reply(bo, root, 'r2, for @dan', { mentions: ['dan'] });
    await reply(cy, root, 'r3', { show_in_channel: true });
    expect(await stateOf(ana, root)).toEqual({
      participant: true,
      unread_replies: 3,
      last_read_at: root.created_at,
    });
    expect(await stateOf(bo, root)).toMatchObject({ participant: true, unread_replies: 1 });
    expect(await stateOf(cy, root)).toMatchObject({ participant: true, unread_replies: 0 });
    // dan was mentioned in r2: from just before it
    expect(await stateOf(dan, root)).toEqual({
      participant: true,
      unread_replies: 2,
      last_read_at: lessOneMs(r2.created_at),
    });
    // a reply moves its author's cursor; their own never count
    const mine = await reply(ana, root, 'mine');
    expect(await unreadOf(ana, root)).toBe(0);
    expect(await unreadOf(bo, root)).toBe(2);

    // unsent replies leave the count; a blocked author's replies too (for the blocker only)
    expect((await bo.api.delete(`/v1/messages/${r1.id}`)).status).toBe(200);
    expect(
      (await ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: r2.id })).body
        .unread_replies,
    ).toBe(2);
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
    expect(await unreadOf(ana, root)).toBe(1);
    expect(await unreadOf(dan, root)).toBe(3); // r2, r3 and ana's
    // a blocked author's reply unsent: still nothing for ana, one less for dan
    expect((await bo.api.delete(`/v1/messages/${r2.id}`)).status).toBe(200);
    expect(await unreadOf(ana, root)).toBe(1);
    expect(await unreadOf(dan, root)).toBe(2);
    // thread unread from r2 put ana's cursor before her own reply: it never counts, unsent or not
    expect((await ana.api.delete('/v1/me/blocks/bo')).status).toBeLessThan(300);
    expect(await unreadOf(ana, root)).toBe(1);
    expect((await ana.api.delete(`/v1/messages/${mine.id}`)).status).toBe(200);
    expect(await unreadOf(ana, root)).toBe(1);
    expect(await unreadOf(dan, root)).toBe(1);

    // a non-member's view: nothing; the backend key sees no thread state
    const backend = (await ws.api.get(`/v1/channels/${ch.id}/messages`)).body.messages as {
      thread?: unknown;
    }[];
    expect(backend.filter((m) => m.thread !== undefined)).toEqual([]);
  });

  it('thread read and unread move only the caller’s thread cursor, answer the state, and tell only their own sockets', async () => {
    const [sa, sb] = await Promise.all([
      connectSocket(t.baseUrl, ana.token),
      connectSocket(t.baseUrl, bo.token),
    ]);
    const root = await send(ana, 'root');
    const r1 = await reply(bo, root, 'r1');
    await reply(cy, root, 'r2');
    const top = await send(bo, 'in the channel');
    expect((await inbox(ana)).unread_count).toBe(1);

    const read = await ana.api.post(`/v1/messages/${root.id}/thread/read`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      thread_id: root.id,
      channel_id: ch.id,
      last_read_at: expect.any(String),
      unread_replies: 0,
    });
    const env = await sa.waitFor('notification.thread_read', (e) => e?.data?.thread_id === root.id);
    expect(env).toMatchObject({ channel_id: ch.id, data: read.body });
    expect(env.seq).toBeUndefined();
    expect(await stateOf(ana, root)).toEqual({
      participant: true,
      unread_replies: 0,
      last_read_at: read.body.last_read_at,
    });
    // the channel's counts are untouched by the thread, and the other way round
    expect((await inbox(ana)).unread_count).toBe(1);
    await ana.api.post(`/v1/channels/${ch.id}/unread`, { message_id: top.id });
    expect(await unreadOf(ana, root)).toBe(0);

    const unread = await ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: r1.id });
    expect(unread.body).toEqual({
      thread_id: root.id,
      channel_id: ch.id,
      last_read_at: lessOneMs(r1.created_at),
      unread_replies: 2,
    });
    const marked = await sa.waitFor('notification.mark_unread', (e) => e?.data?.thread_id === root.id);
    expect(marked.data).toEqual({ ...unread.body, message_id: r1.id });
    // without message_id: the newest reply not the caller's
    await ana.api.post(`/v1/messages/${root.id}/thread/read`);
    expect((await ana.api.post(`/v1/messages/${root.id}/thread/unread`, {})).body.unread_replies).toBe(1);

    // nothing of it reached bo: judged after a message that did
    const control = await send(cy, 'control');
    await sb.expectNoneBefore('notification.thread_read', () => true, [
      'message.new',
      (e) => e?.data?.id === control.id,
    ]);
    expect(
      sb.events.filter((e) => e.name === 'notification.mark_unread' || e.name === 'notification.thread_read'),
    ).toEqual([]);
    // realtime broadcasts carry no viewer's thread state
    expect(sb.events.filter((e) => e.name === 'message.new' && e.payload.data.thread !== undefined)).toEqual(
      [],
    );
  });

  it('a non-participant who reads gets a cursor but takes no part; marking unread makes a participant', async () => {
    // the author of a root nobody answered yet who reads it still takes part
    const quiet = await send(ana, 'nobody answered yet');
    const own = await ana.api.post(`/v1/messages/${quiet.id}/thread/read`);
    expect(await stateOf(ana, quiet)).toEqual({
      participant: true,
      unread_replies: 0,
      last_read_at: own.body.last_read_at,
    });
    await reply(bo, quiet, 'at last');
    expect(await stateOf(ana, quiet)).toMatchObject({ participant: true, unread_replies: 1 });

    const root = await send(ana, 'root');
    await reply(bo, root, 'r1');
    expect(await stateOf(dan, root)).toEqual({ participant: false, unread_replies: 0, last_read_at: null });
    const read = await dan.api.post(`/v1/messages/${root.id}/thread/read`);
    expect(read.body.unread_replies).toBe(0);
    expect(await stateOf(dan, root)).toEqual({
      participant: false,
      unread_replies: 0,
      last_read_at: read.body.last_read_at,
    });
    await reply(bo, root, 'r2');
    expect(await unreadOf(dan, root)).toBe(0);
    expect((await dan.api.post(`/v1/messages/${root.id}/thread/unread`, {})).body.unread_replies).toBe(1);
    expect(await stateOf(dan, root)).toMatchObject({ participant: true, unread_replies: 1 });
    expect(
      (await dan.api.get('/v1/me/threads')).body.threads.map((x: { thread_id: string }) => x.thread_id),
    ).toEqual([root.id]);
  });

  it('refuses what §23 refuses and changes nothing; the backend acts for a user', async () => {
    const root = await send(ana, 'root');
    const other = await send(ana, 'other root');
    const r1 = await reply(bo, root, 'r1');
    const o1 = await reply(bo, other, 'o1');
    const gone = await reply(bo, root, 'gone');
    await bo.api.delete(`/v1/messages/${gone.id}`);
    const before = await stateOf(ana, root);
    const cases: [Promise<{ status: number; body: { error?: { code: string } } }>, number, string][] = [
      [ana.api.post(`/v1/messages/${r1.id}/thread/read`), 400, 'VALIDATION_ERROR'],
      [ana.api.post(`/v1/messages/${r1.id}/thread/unread`, {}), 400, 'VALIDATION_ERROR'],
      [ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: o1.id }), 400, 'VALIDATION_ERROR'],
      [
        ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: other.id }),
        400,
        'VALIDATION_ERROR',
      ],
      [
        ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: gone.id }),
        422,
        'MESSAGE_DELETED',
      ],
      [ana.api.post(`/v1/messages/${root.id}/thread/unread`, { message_id: 'nope' }), 404, 'NOT_FOUND'],
      [ana.api.post('/v1/messages/01900000-0000-7000-8000-0000000000aa/thread/read'), 404, 'NOT_FOUND'],
      [ws.api.post(`/v1/messages/${root.id}/thread/read`), 400, 'VALIDATION_ERROR'],
    ];
    for (const [res, status, code] of cases) {
      const r = await res;
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    }
    const outsider = await ws.user('eve');
    expect((await outsider.api.post(`/v1/messages/${root.id}/thread/read`)).status).toBe(403);
    expect(await stateOf(ana, root)).toEqual(before);

    const forBo = await ws.api.post(`/v1/messages/${root.id}/thread/unread`, {
      user_external_id: 'ana',
      message_id: r1.id,
    });
    expect([forBo.status, forBo.body.unread_replies]).toEqual([200, 1]);
    expect(await unreadOf(ana, root)).toBe(1);
    expect(await unreadOf(bo, root)).toBe(0);
  });

  it('lists the caller’s threads by latest reply with pages and filters, counts unread_threads, and drops a leaver’s cursors', async () => {
    const t1 = await send(ana, 't1');
    const t2 = await send(ana, 't2');
    const t3 = await send(bo, 't3 (ana is mentioned in a reply)');
    await send(ana, 'no replies');
    await reply(bo, t1, 'on t1');
    await reply(cy, t2, 'on t2');
    const last = await reply(cy, t3, 'on t3 for @ana', { mentions: ['ana'] });
    const all = (await ana.api.get('/v1/me/threads')).body;
    expect(all.threads.map((x: { thread_id: string }) => x.thread_id)).toEqual([t3.id, t2.id, t1.id]);
    expect(all.threads[0]).toEqual({
      thread_id: t3.id,
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      root: expect.objectContaining({
        id: t3.id,
        reply_count: 1,
        thread: expect.objectContaining({ unread_replies: 1 }),
      }),
      reply_count: 1,
      unread_replies: 1,
      last_reply_at: last.created_at,
      last_read_at: lessOneMs(last.created_at),
    });
    const p1 = (await ana.api.get('/v1/me/threads?limit=2')).body;
    const p2 = (await ana.api.get(`/v1/me/threads?limit=2&before=${p1.next_cursor}`)).body;
    expect([...p1.threads, ...p2.threads].map((x: { thread_id: string }) => x.thread_id)).toEqual([
      t3.id,
      t2.id,
      t1.id,
    ]);
    expect([p1.has_more, p2.has_more, p2.next_cursor]).toEqual([true, false, null]);
    expect((await inbox(ana)).unread_threads).toBe(3);

    await ana.api.post(`/v1/messages/${t2.id}/thread/read`);
    expect((await inbox(ana)).unread_threads).toBe(2);
    const unreadOnly = (await ana.api.get('/v1/me/threads?unread_only=true')).body;
    expect(unreadOnly.threads.map((x: { thread_id: string }) => x.thread_id)).toEqual([t3.id, t1.id]);
    expect((await ana.api.get(`/v1/me/threads?channel=${ch.external_id}`)).body.threads).toHaveLength(3);
    expect((await ana.api.get('/v1/me/threads?unread_only=maybe')).status).toBe(400);
    expect((await ana.api.get('/v1/me/threads')).body.threads.length).toBe(3);

    // leaving ends participation and drops the cursors
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/ana`)).status).toBeLessThan(300);
    expect((await ana.api.get('/v1/me/threads')).body.threads).toEqual([]);
    expect(
      (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['ana'] })).status,
    ).toBeLessThan(300);
    expect(await stateOf(ana, t1)).toEqual({ participant: false, unread_replies: 0, last_read_at: null });
  });

  it('keeps counts exact when an erasure removes replies outright', async () => {
    const root = await send(ana, 'root');
    await reply(bo, root, 'b1');
    await reply(cy, root, 'c1');
    await reply(bo, root, 'b2');
    await reply(cy, root, 'c2');
    expect(await unreadOf(ana, root)).toBe(4);
    const erased = await ws.api.delete('/v1/users/bo?messages=delete');
    expect(erased.status).toBeLessThan(300);
    expect(await unreadOf(ana, root)).toBe(2);
    await reply(dan, root, 'd1');
    expect(await unreadOf(ana, root)).toBe(3);
    expect(await unreadOf(cy, root)).toBe(1);
  });
});
