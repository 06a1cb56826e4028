import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import type { TestUser } from '../support/fixtures';
import { closeAllSockets, connectSocket } from '../support/socket';
import { eventsOf, history, Msg, Page, room, send, sleep } from './helpers';

/** A thread root as the API shows it (CONTRACT §15). */
interface Threaded extends Msg {
  thread_id?: string;
  show_in_channel?: boolean;
  reply_count?: number;
  last_reply_at?: string | null;
  thread_participants?: { id: string; external_id: string; name: string | null }[];
}

const NAMES: Record<string, string> = { ana: 'Ana', bo: 'Bo', cy: 'Cy' };
const person = (u: TestUser) => ({
  id: u.id,
  external_id: u.external_id,
  name: NAMES[u.external_id] ?? null,
});

async function reply(user: TestUser, channelId: string, root: { id: string }, content: string, extra = {}) {
  return (await send(user, channelId, { content, thread_id: root.id, ...extra })) as Threaded;
}

async function replies(user: TestUser['api'], rootId: string, query: Record<string, string | number> = {}) {
  const qs = new URLSearchParams(
    Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const res = await user.get(`/v1/messages/${rootId}/replies${qs ? `?${qs}` : ''}`);
  expect(res.status).toBe(200);
  return res.body as Page & { messages: Threaded[] };
}

async function rootOf(api: TestUser['api'], channelId: string, id: string): Promise<Threaded> {
  const m = (await history(api, channelId, { limit: 100 })).messages.find((x) => x.id === id);
  if (!m) throw new Error(`${id} is not in the history`);
  return m;
}

describe('threads (CONTRACT §15)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  it('a reply is in /replies, not in history; show_in_channel puts it in both; every form accepts thread_id', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const root = (await send(ana, ch.id, 'root')) as Threaded;
    const only = await reply(bo, ch.id, root, 'thread only');
    await sleep(2);
    const shown = await reply(cy, ch.id, root, 'also in the channel', { show_in_channel: true });
    await sleep(2);
    const byBackend = await ws.api.post('/v1/messages', {
      channel_id: ch.id,
      user_external_id: 'ana',
      content: 'backend form',
      thread_id: root.id,
    });
    expect(byBackend.status).toBe(201);
    expect([only.thread_id, only.show_in_channel, shown.thread_id, shown.show_in_channel]).toEqual([
      root.id,
      false,
      root.id,
      true,
    ]);
    expect([byBackend.body.thread_id, byBackend.body.show_in_channel]).toEqual([root.id, false]);
    // a reply carries no counters of its own; a root carries them even without replies
    expect('reply_count' in only).toBe(false);
    expect([root.reply_count, root.last_reply_at, root.thread_participants]).toEqual([0, null, []]);

    const all = await replies(bo.api, root.id);
    expect(all.messages.map((m) => m.content)).toEqual([
      'thread only',
      'also in the channel',
      'backend form',
    ]);
    expect([all.has_more, all.next_cursor]).toEqual([false, null]);
    for (const viewer of [bo.api, ws.api]) {
      expect((await history(viewer, ch.id)).messages.map((m) => m.id)).toEqual([shown.id, root.id]);
    }
  });

  it('the root counts live replies, the last reply time and its authors (earliest first, once each)', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const root = await send(ana, ch.id, 'who is in?');
    await reply(bo, ch.id, root, 'me');
    await reply(cy, ch.id, root, 'me too');
    const last = await reply(bo, ch.id, root, 'me again');
    for (const viewer of [ana.api, ws.api]) {
      const r = await rootOf(viewer, ch.id, root.id);
      expect([r.reply_count, r.last_reply_at, r.thread_participants]).toEqual([
        3,
        last.created_at,
        [person(bo), person(cy)],
      ]);
    }
    // unsending the last reply: one fewer, and the last reply time goes back to the newest live one
    const before = (await replies(ana.api, root.id)).messages[1]!;
    expect((await bo.api.delete(`/v1/messages/${last.id}`)).status).toBe(200);
    const r = await rootOf(ana.api, ch.id, root.id);
    expect([r.reply_count, r.last_reply_at]).toEqual([2, before.created_at]);
    // the unsent reply stays in the thread, blanked, like history
    const page = await replies(ana.api, root.id);
    expect(page.messages.map((m) => [m.content, m.deleted_at !== null])).toEqual([
      ['me', false],
      ['me too', false],
      ['', true],
    ]);
  });

  it('refuses a nested, foreign or unknown root, and show_in_channel without a thread, storing nothing', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const root = await send(ana, ch.id, 'root');
    const r1 = await reply(bo, ch.id, root, 'a reply');
    const elsewhere = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `other-${Date.now()}`,
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    const foreign = await send(ana, elsewhere.body.id, 'root elsewhere');
    const refused = [
      { content: 'nested', thread_id: r1.id },
      { content: 'wrong room', thread_id: foreign.id },
      { content: 'unknown', thread_id: '01900000-0000-7000-8000-0000000000aa' },
      { content: 'not a uuid', thread_id: 'nope' },
      { content: 'no thread', show_in_channel: true },
      { content: 'not a boolean', thread_id: root.id, show_in_channel: 'yes' },
    ];
    for (const body of refused) {
      expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, body), 400, 'VALIDATION_ERROR');
    }
    expect((await replies(ana.api, root.id)).messages.map((m) => m.id)).toEqual([r1.id]);
    expect((await history(ws.api, ch.id)).messages.map((m) => m.id)).toEqual([root.id]);
    expect((await rootOf(ana.api, ch.id, root.id)).reply_count).toBe(1);
  });

  it('an unsent root keeps its thread readable and still takes replies', async () => {
    const { ch, ana, bo } = await room(t);
    const root = await send(ana, ch.id, 'soon gone');
    await reply(bo, ch.id, root, 'before');
    expect((await ana.api.delete(`/v1/messages/${root.id}`)).status).toBe(200);
    await reply(bo, ch.id, root, 'after');
    expect((await replies(bo.api, root.id)).messages.map((m) => m.content)).toEqual(['before', 'after']);
    expect((await rootOf(bo.api, ch.id, root.id)).reply_count).toBe(2);
  });

  it('/replies: members only, 404 outside the workspace, blocks applied, keyset pages both ways', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const root = await send(ana, ch.id, 'root');
    const sent: Threaded[] = [];
    for (let i = 1; i <= 5; i++) {
      sent.push(await reply(i % 2 ? bo : cy, ch.id, root, `r${i}`));
      await sleep(2);
    }
    const outsider = await ws.user('dee', 'Dee');
    expectError(await outsider.api.get(`/v1/messages/${root.id}/replies`), 403, 'NOT_A_MEMBER');
    expectError(
      await bo.api.get(`/v1/messages/01900000-0000-7000-8000-0000000000aa/replies`),
      404,
      'NOT_FOUND',
    );
    expectError(await bo.api.get(`/v1/messages/not-an-id/replies`), 404, 'NOT_FOUND');
    expectError(await bo.api.get(`/v1/messages/${root.id}/replies?before=garbage`), 400, 'VALIDATION_ERROR');

    const p1 = await replies(ana.api, root.id, { limit: 2 });
    expect([p1.messages.map((m) => m.content), p1.has_more]).toEqual([['r1', 'r2'], true]);
    const p2 = await replies(ana.api, root.id, { limit: 2, after: p1.next_cursor! });
    expect([p2.messages.map((m) => m.content), p2.has_more]).toEqual([['r3', 'r4'], true]);
    const p3 = await replies(ana.api, root.id, { limit: 2, after: p2.next_cursor! });
    expect([p3.messages.map((m) => m.content), p3.has_more, p3.next_cursor]).toEqual([['r5'], false, null]);
    const back = await replies(ana.api, root.id, { limit: 2, before: p2.next_cursor! });
    expect([back.messages.map((m) => m.content), back.has_more]).toEqual([['r2', 'r3'], true]);
    const further = await replies(ana.api, root.id, { limit: 2, before: back.next_cursor! });
    expect([further.messages.map((m) => m.content), further.has_more]).toEqual([['r1'], false]);

    // ana blocks cy: cy's replies leave ana's view of the thread
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'cy' })).status).toBeLessThan(300);
    expect((await replies(ana.api, root.id)).messages.map((m) => m.content)).toEqual(['r1', 'r3', 'r5']);
  });

  it('thread-only replies stay out of unread_count and last_message; a mention in one counts', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const root = await send(ana, ch.id, 'root');
    const inbox = async () => {
      const res = await bo.api.get('/v1/me/channels');
      const c = res.body.channels.find((x: { id: string }) => x.id === ch.id);
      return [c.unread_count, c.mention_unread_count, c.last_message?.id];
    };
    await reply(cy, ch.id, root, 'plain');
    expect(await inbox()).toEqual([1, 0, root.id]);
    await reply(cy, ch.id, root, 'hey bo', { mentions: ['bo'] });
    expect(await inbox()).toEqual([1, 1, root.id]);
    const shown = await reply(cy, ch.id, root, 'for everyone', { show_in_channel: true });
    expect(await inbox()).toEqual([2, 1, shown.id]);
    // bo's own thread-only reply does not change bo's count either
    await reply(bo, ch.id, root, 'mine');
    expect(await inbox()).toEqual([2, 1, shown.id]);
    expect((await bo.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBeLessThan(300);
    expect(await inbox()).toEqual([0, 0, shown.id]);
  });

  it('events: message.created carries thread_id; the root gets a realtime message.updated with its counters and a seq, no webhook event', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const root = await send(ana, ch.id, 'root');
    const sock = await connectSocket(t.baseUrl, ana.token);
    const viaSocket = await connectSocket(t.baseUrl, cy.token);
    const r1 = await reply(bo, ch.id, root, 'rest reply');
    const created = await sock.waitFor('message.new', (e) => e.data.id === r1.id);
    expect([created.data.thread_id, created.data.show_in_channel]).toEqual([root.id, false]);
    const up = await sock.waitFor('message.updated', (e) => e.data.id === root.id);
    expect(up.data).toEqual({
      id: root.id,
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      reply_count: 1,
      last_reply_at: r1.created_at,
      thread_participants: [person(bo)],
    });
    expect(up.seq).toBe(created.seq + 1);

    const ack = await viaSocket.emitAck('message.send', {
      channel_id: ch.id,
      content: 'socket reply',
      thread_id: root.id,
    });
    expect([ack.ok, ack.data.thread_id]).toEqual([true, root.id]);
    await sock.waitFor('message.updated', (e) => e.data.id === root.id && e.data.reply_count === 2);
    expect((await bo.api.delete(`/v1/messages/${r1.id}`)).status).toBe(200);
    // after the second reply (count 2), the unsend brings it back to 1; the authors stay
    const down = await sock.waitFor(
      'message.updated',
      (e) => e.data.id === root.id && e.data.reply_count === 1 && e.data.thread_participants.length === 2,
    );
    expect([down.data.last_reply_at, down.data.thread_participants]).toEqual([
      ack.data.created_at,
      [person(bo), person(cy)],
    ]);

    const log = await eventsOf(t, ch.id);
    const mine = log.filter(
      (e) => e.seq! > 0 && e.type !== 'channel.created' && !e.type.startsWith('member.'),
    );
    expect(mine.map((e) => e.type)).toEqual([
      'message.created', // the root
      'message.created',
      'thread.updated',
      'message.created',
      'thread.updated',
      'message.deleted',
      'thread.updated',
    ]);
    expect((mine[1]!.payload.message as { thread_id: string }).thread_id).toBe(root.id);
    // message.updated webhooks are edits only: a counter change is logged as thread.updated, not offered to webhooks
    expect(log.filter((e) => e.type === 'message.updated')).toHaveLength(0);
  });

  it('/v1/me/sync carries the reply and the root counters as clients saw them live', async () => {
    const { ch, ana, bo } = await room(t);
    const root = await send(ana, ch.id, 'root');
    const start = await ana.api.get('/v1/me/sync');
    expect(start.status).toBe(200);
    const r1 = await reply(bo, ch.id, root, 'later');
    const res = await ana.api.get(`/v1/me/sync?since=${encodeURIComponent(start.body.next_cursor)}`);
    expect(res.status).toBe(200);
    const got = (res.body.events as { type: string; data: { id: string; reply_count?: number } }[]).filter(
      (e) => e.type.startsWith('message.'),
    );
    expect(got.map((e) => [e.type, e.data.id])).toEqual([
      ['message.new', r1.id],
      ['message.updated', root.id],
    ]);
    expect(got[1]!.data.reply_count).toBe(1);
  });

  it('OpenAPI documents the replies route and the thread fields of the message object', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { responses?: Record<string, { content?: unknown }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const replies = doc.paths['/v1/messages/{id}/replies']?.get;
    expect(JSON.stringify(replies?.responses?.['200'])).toContain('#/components/schemas/MessagePage');
    const message = doc.components.schemas.Message!.properties;
    for (const field of [
      'thread_id',
      'show_in_channel',
      'reply_count',
      'last_reply_at',
      'thread_participants',
      'metadata',
    ])
      expect(Object.keys(message)).toContain(field);
    const send = doc.components.schemas.SendMessageDto!.properties;
    expect(Object.keys(send)).toEqual(expect.arrayContaining(['thread_id', 'show_in_channel', 'metadata']));
  });
});
