import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Client, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { group, history, Msg, room, Room, send, sleep } from '../messages/helpers';
import { createWebhook, eventOf, poll } from '../webhooks/helpers';

/** The erasure batch size of this file: small, so a few messages already take several batches. */
const BATCH = 200;

interface Threaded extends Msg {
  thread_id?: string;
  reply_count?: number;
  thread_participants?: { id: string; external_id: string; name: string | null }[];
}

interface ChannelEvent {
  seq: number;
  type: string;
  data: { id?: string; removed?: boolean; reply_count?: number; deleted_at?: string; [k: string]: unknown };
}

/** CONTRACT §20: DELETE /v1/users/:external_id?messages=keep|anonymize|delete. */
describe('user erasure', () => {
  let t: TestApp;
  let rx: Receiver;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_ERASURE_BATCH_SIZE: String(BATCH) });
    rx = await Receiver.start();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  /** The channel's events after `seq`, as a member reads them (realtime's envelopes). */
  async function eventsAfter(u: TestUser, channelId: string, seq: number): Promise<ChannelEvent[]> {
    const out: ChannelEvent[] = [];
    for (;;) {
      const res = await u.api.get(`/v1/channels/${channelId}/events?after_seq=${seq}&limit=500`);
      expect(res.status).toBe(200);
      out.push(...(res.body.events as ChannelEvent[]));
      if (!res.body.has_more) return out;
      seq = out[out.length - 1]!.seq;
    }
  }

  async function lastSeq(u: TestUser, channelId: string): Promise<number> {
    const events = await eventsAfter(u, channelId, 0);
    return events.length ? events[events.length - 1]!.seq : 0;
  }

  const erase = (ws: TestWorkspace, externalId: string, mode?: string) =>
    ws.api.delete(`/v1/users/${encodeURIComponent(externalId)}${mode ? `?messages=${mode}` : ''}`);

  const reply = (u: TestUser, channelId: string, root: Msg, content: string) =>
    send(u, channelId, { content, thread_id: root.id }) as Promise<Threaded>;

  /** A message as a member sees it now: in the channel's history, or among the replies of `roots`. */
  async function one(
    u: TestUser,
    channelId: string,
    id: string,
    roots: Msg[] = [],
  ): Promise<Threaded | undefined> {
    const found = (await history(u.api, channelId, { limit: 100 })).messages.find((m) => m.id === id);
    if (found) return found;
    for (const root of roots) {
      const res = await u.api.get(`/v1/messages/${root.id}/replies?limit=100`);
      const reply =
        res.status === 200 ? (res.body.messages as Threaded[]).find((m) => m.id === id) : undefined;
      if (reply) return reply;
    }
    return undefined;
  }

  async function unreadOf(u: TestUser, channelId: string): Promise<number> {
    const res = await u.api.get('/v1/me/channels?limit=100');
    expect(res.status).toBe(200);
    return (res.body.channels as { id: string; unread_count: number }[]).find((c) => c.id === channelId)!
      .unread_count;
  }

  async function issuedToken(ws: TestWorkspace, externalId: string): Promise<Client> {
    const res = await ws.api.post(`/v1/users/${externalId}/token`, {});
    expect(res.status).toBe(200);
    return new Client(t, `Bearer ${res.body.token as string}`);
  }

  /**
   * Bo's part of a lively channel: plain messages, one with metadata and one pinned, a reply in Ana's
   * thread, a root of his own Ana replied to, a reaction on Ana's message; Ana quotes, mentions and
   * reacts to Bo. `others` are messages that must come through untouched.
   */
  async function scene(r: Room) {
    const { ws, ch, ana, bo, cy } = r;
    const boPlain = await send(bo, ch.id, 'bo says zebrafish');
    const boMeta = await send(bo, ch.id, { content: 'bo with metadata zebrafish', metadata: { k: 'v' } });
    const anaRoot = await send(ana, ch.id, 'ana asks');
    const boReply = await reply(bo, ch.id, anaRoot, 'bo replies zebrafish');
    const cyReply = await reply(cy, ch.id, anaRoot, 'cy replies');
    const boRoot = await send(bo, ch.id, 'bo root zebrafish');
    const anaReplyToBo = await reply(ana, ch.id, boRoot, 'ana answers bo');
    const boPinned = await send(bo, ch.id, 'bo pinned zebrafish');
    expect((await ws.api.post(`/v1/messages/${boPinned.id}/pin`)).status).toBe(200);
    const anaQuote = await send(ana, ch.id, {
      content: 'ana quotes bo',
      parent_id: boPlain.id,
      mentions: ['bo'],
    });
    expect((await bo.api.post(`/v1/messages/${anaQuote.id}/reactions`, { emoji: '👍' })).status).toBe(200);
    expect((await ana.api.post(`/v1/messages/${boPlain.id}/reactions`, { emoji: '🎉' })).status).toBe(200);
    const boUnsent = await send(bo, ch.id, 'bo unsent before');
    expect((await bo.api.delete(`/v1/messages/${boUnsent.id}`)).status).toBe(200);
    const cyLast = await send(cy, ch.id, 'cy zebrafish too');
    const live = [boPlain, boMeta, boReply, boRoot, boPinned];
    return {
      boPlain,
      boMeta,
      anaRoot,
      boReply,
      cyReply,
      boRoot,
      anaReplyToBo,
      boPinned,
      anaQuote,
      boUnsent,
      cyLast,
      /** Bo's messages that were live before the erasure. */
      live,
      others: [anaRoot, cyReply, anaReplyToBo, anaQuote, cyLast],
    };
  }

  async function searchIds(u: TestUser, channelId: string, q: string): Promise<string[]> {
    const res = await u.api.get(`/v1/channels/${channelId}/messages/search?q=${encodeURIComponent(q)}`);
    expect(res.status).toBe(200);
    return (res.body.messages as Msg[]).map((m) => m.id);
  }

  async function expectUserGone(ws: TestWorkspace, bo: TestUser, boIssued: Client) {
    expectError(await ws.api.get('/v1/users/bo'), 404, 'NOT_FOUND');
    expectError(await bo.api.get('/v1/me/channels'), 401, 'UNAUTHORIZED');
    expectError(await boIssued.get('/v1/me/channels'), 401, 'UNAUTHORIZED');
  }

  describe('messages=anonymize', () => {
    it('blanks every message Bo wrote as an unsend does, each announced once, and nothing else', async () => {
      const r = await room(t);
      const { ws, ch, ana, bo } = r;
      const url = rx.url(200);
      await createWebhook(ws, url, ['message.deleted']);
      const s = await scene(r);
      const boIssued = await issuedToken(ws, 'bo');
      expect(await searchIds(ana, ch.id, 'zebrafish')).toHaveLength(6);
      const unsentAt = (await one(ana, ch.id, s.boUnsent.id))!.deleted_at;
      await rx.waitFor(url, { count: 1 }); // the scene's own unsend
      const before = await lastSeq(ana, ch.id);

      const res = await erase(ws, 'bo', 'anonymize');
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      await expectUserGone(ws, bo, boIssued);

      const roots = [s.anaRoot, s.boRoot];
      for (const m of [...s.live, s.boUnsent]) {
        const got = await one(ana, ch.id, m.id, roots);
        expect(got).toMatchObject({
          content: '',
          user: null,
          user_id: null,
          attachment_url: null,
          attachment: null,
          metadata: {},
        });
        expect(got!.deleted_at).toEqual(expect.any(String));
      }
      // Bo's earlier unsend keeps its own deleted_at
      expect((await one(ana, ch.id, s.boUnsent.id))!.deleted_at).toBe(unsentAt);
      for (const m of s.others) {
        const got = (await one(ana, ch.id, m.id, roots))!;
        expect({ content: got.content, deleted_at: got.deleted_at }).toEqual({
          content: m.content,
          deleted_at: null,
        });
      }

      // events: one message.deleted per live message of Bo's, none for anyone else's, and the side effects
      const events = await eventsAfter(ana, ch.id, before);
      expect(events[0]).toMatchObject({ type: 'member.removed', data: { external_id: 'bo' } });
      const deleted = events.filter((e) => e.type === 'message.deleted').map((e) => e.data.id);
      expect(deleted.sort()).toEqual(s.live.map((m) => m.id).sort());
      expect(
        events.filter((e) => e.type === 'message.deleted').every((e) => e.data.removed === undefined),
      ).toBe(true);
      expect(events.find((e) => e.type === 'message.unpinned')?.data).toMatchObject({
        message: { id: s.boPinned.id },
      });
      const thread = events.find((e) => e.type === 'message.updated' && e.data.id === s.anaRoot.id);
      expect(thread?.data).toMatchObject({ reply_count: 1 });
      await rx.waitFor(url, { count: 1 + s.live.length, pred: (q) => eventOf(q) === 'message.deleted' });
      await sleep(300);
      const hooked = rx
        .received(url)
        .slice(1)
        .map((q) => (q.json as { data: { message: { id: string } } }).data.message.id);
      expect(hooked.sort()).toEqual(s.live.map((m) => m.id).sort());

      // threads, pins, reactions, quotes, mentions
      const root = (await one(ana, ch.id, s.anaRoot.id))!;
      expect(root.reply_count).toBe(1);
      expect(root.thread_participants!.map((p) => p.external_id)).toEqual(['cy']);
      const boRootReplies = await ana.api.get(`/v1/messages/${s.boRoot.id}/replies`);
      expect((boRootReplies.body.messages as Msg[]).map((m) => m.content)).toEqual(['ana answers bo']);
      expect((await ana.api.get(`/v1/channels/${ch.id}/pins`)).body.messages).toEqual([]);
      const quote = (await one(ana, ch.id, s.anaQuote.id))!;
      expect(quote.reactions).toEqual([]);
      expect(quote.mentions).toBeUndefined();
      expect(quote.quoted_message).toMatchObject({
        id: s.boPlain.id,
        user_id: null,
        user_name: null,
        content: '',
        deleted: true,
      });
      // Ana's reaction on Bo's message stays, as on any unsent message
      expect((await one(ana, ch.id, s.boPlain.id))!.reactions).toEqual([
        { emoji: '🎉', count: 1, reacted_by_me: true },
      ]);

      // search finds only Cy's message now
      expect(await searchIds(ana, ch.id, 'zebrafish')).toEqual([s.cyLast.id]);
      expect(
        (await ws.api.get(`/v1/channels/${ch.id}`)).body.members
          .map((m: { external_id: string }) => m.external_id)
          .sort(),
      ).toEqual(['ana', 'cy']);
    });
  });

  describe('messages=delete', () => {
    it("removes Bo's messages outright; a root with others' replies is blanked instead; counters stay exact", async () => {
      const r = await room(t);
      const { ws, ch, ana, cy } = r;
      const url = rx.url(200);
      await createWebhook(ws, url, ['message.deleted']);
      const s = await scene(r);
      // Cy has read nothing: 8 messages in the channel itself (the 3 thread-only replies are not), 1 his own, 1 unsent
      const unread = () => unreadOf(cy, ch.id);
      expect(await unread()).toBe(6);
      const before = await lastSeq(ana, ch.id);

      expect((await erase(ws, 'bo', 'delete')).status).toBe(204);
      expectError(await ws.api.get('/v1/users/bo'), 404, 'NOT_FOUND');

      const removed = [s.boPlain, s.boMeta, s.boReply, s.boPinned, s.boUnsent];
      for (const m of removed) {
        expect(await one(ana, ch.id, m.id, [s.anaRoot, s.boRoot])).toBeUndefined();
        expectError(await ws.api.post(`/v1/messages/${m.id}/pin`), 404, 'NOT_FOUND');
      }
      // Bo's root stays, blanked, for Ana's reply under it
      const boRoot = (await one(ana, ch.id, s.boRoot.id))!;
      expect(boRoot).toMatchObject({ content: '', user: null, reply_count: 1 });
      expect(
        (await ana.api.get(`/v1/messages/${s.boRoot.id}/replies`)).body.messages.map((m: Msg) => m.id),
      ).toEqual([s.anaReplyToBo.id]);

      const events = await eventsAfter(ana, ch.id, before);
      const deleted = events.filter((e) => e.type === 'message.deleted');
      expect(
        deleted
          .filter((e) => e.data.removed)
          .map((e) => e.data.id)
          .sort(),
      ).toEqual(removed.map((m) => m.id).sort());
      expect(deleted.filter((e) => !e.data.removed).map((e) => e.data.id)).toEqual([s.boRoot.id]);
      expect(
        events.find((e) => e.type === 'message.updated' && e.data.id === s.anaRoot.id)?.data,
      ).toMatchObject({
        reply_count: 1,
        thread_participants: [{ external_id: 'cy' }],
      });
      await rx.waitFor(url, { count: removed.length + 1, pred: (q) => eventOf(q) === 'message.deleted' });

      const root = (await one(ana, ch.id, s.anaRoot.id))!;
      expect(root).toMatchObject({ reply_count: 1 });
      expect(
        (await ana.api.get(`/v1/messages/${s.anaRoot.id}/replies`)).body.messages.map((m: Msg) => m.id),
      ).toEqual([s.cyReply.id]);
      expect((await ana.api.get(`/v1/channels/${ch.id}/pins`)).body.messages).toEqual([]);
      const quote = (await one(ana, ch.id, s.anaQuote.id))!;
      expect(quote.parent_id).toBeUndefined();
      expect(quote.quoted_message).toBeUndefined();
      expect(quote.mentions).toBeUndefined();
      expect(quote.reactions).toEqual([]);
      expect(await searchIds(ana, ch.id, 'zebrafish')).toEqual([s.cyLast.id]);

      // unread: Ana's two; Bo's plain, metadata and pinned ones are removed, his root is blank (unsent)
      expect(await unread()).toBe(2);
      expect((await cy.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBe(200);
      expect(await unread()).toBe(0);
    });

    it('leaves no phantom unread when the last message read was removed', async () => {
      const r = await room(t);
      const { ws, ch, ana, bo, cy } = r;
      await send(ana, ch.id, 'ana first');
      await send(bo, ch.id, 'bo last');
      expect((await cy.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBe(200);
      await send(bo, ch.id, 'bo unread');
      const unread = () => unreadOf(cy, ch.id);
      expect(await unread()).toBe(1);
      expect((await erase(ws, 'bo', 'delete')).status).toBe(204);
      expect(await unread()).toBe(0);
      await send(ana, ch.id, 'ana after');
      expect(await unread()).toBe(1);
    });
  });

  describe('messages=keep and the mode itself', () => {
    it('keeps the messages with user null (also without a mode); an unknown mode is 400 and changes nothing', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const mb = await send(bo, ch.id, 'bo remains');
      const mc = await send(cy, ch.id, 'cy remains');
      expectError(await erase(ws, 'bo', 'shred'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.delete('/v1/users/bo?messages=keep&purge=1'), 400, 'VALIDATION_ERROR');
      expect((await ws.api.get('/v1/users/bo')).status).toBe(200);
      expect((await bo.api.get('/v1/me/channels')).status).toBe(200);
      const before = await lastSeq(ana, ch.id);
      expect((await erase(ws, 'bo', 'keep')).status).toBe(204);
      expect((await erase(ws, 'cy')).status).toBe(204);
      expectError(await erase(ws, 'bo', 'keep'), 404, 'NOT_FOUND');
      const h = (await history(ana.api, ch.id)).messages;
      for (const m of [mb, mc]) {
        expect(h.find((x) => x.id === m.id)).toMatchObject({
          content: m.content,
          user: null,
          user_id: null,
          deleted_at: null,
        });
      }
      // keep announces no message events: the members hear that Bo and Cy left
      expect((await eventsAfter(ana, ch.id, before)).map((e) => e.type)).toEqual([
        'member.removed',
        'member.removed',
      ]);
    });

    it('re-creates the external id as a new user who inherits nothing', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const old = await send(bo, ch.id, { content: 'bo before', idempotency_key: 'k1' });
      expect((await bo.api.post('/v1/me/blocks', { external_id: 'ana' })).status).toBe(201);
      expect((await ws.api.post('/v1/users/bo/mute', {})).status).toBe(200);
      expect((await ws.api.post('/v1/users/bo/ban', {})).status).toBe(200);
      const boIssued = await issuedToken(ws, 'bo');
      const later = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'bo later',
        scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
      });
      expect(later.status).toBe(202);
      expect((await erase(ws, 'bo', 'anonymize')).status).toBe(204);
      const gone = await t.app
        .get(DataSource)
        .query(`SELECT id FROM scheduled_messages WHERE user_id = $1`, [bo.id]);
      expect(gone).toEqual([]);

      const again = await ws.api.put('/v1/users/bo', { name: 'New Bo' });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(bo.id);
      expectError(await boIssued.get('/v1/me/channels'), 401, 'UNAUTHORIZED');
      const fresh = await issuedToken(ws, 'bo');
      expect((await fresh.get('/v1/me/channels')).body.channels).toEqual([]);
      expect((await fresh.get('/v1/me/blocks')).body.blocks).toEqual([]);
      expect((await fresh.get('/v1/me/scheduled')).body.scheduled_messages).toEqual([]);
      expectError(await fresh.get(`/v1/channels/${ch.id}/messages`), 403, 'NOT_A_MEMBER');
      // the new Bo can be added, sends (not muted, not banned), and the old message is still nobody's
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['bo'] })).status,
      ).toBe(200);
      const sent = await fresh.post(`/v1/channels/${ch.id}/messages`, {
        content: 'new bo',
        idempotency_key: 'k1',
      });
      expect(sent.status).toBe(201);
      const h = (await history(ana.api, ch.id)).messages;
      expect(h.find((m) => m.id === old.id)).toMatchObject({ user: null, content: '' });
      expect(h.find((m) => m.id === sent.body.id)).toMatchObject({
        user: { external_id: 'bo', name: 'New Bo' },
      });
    });

    it('is for the backend key only, and stays in its workspace', async () => {
      const { ws, ana } = await room(t);
      const other = await room(t);
      expectError(await ana.api.delete('/v1/users/bo?messages=delete'), 403, 'FORBIDDEN');
      expectError(await other.ws.api.delete('/v1/users/nobody'), 404, 'NOT_FOUND');
      expect((await ws.api.get('/v1/users/bo')).status).toBe(200);
      expectError(await ws.api.get('/v1/erasures/not-an-id'), 404, 'NOT_FOUND');
    });
  });

  it('is in the OpenAPI document: the messages mode, 202 {job_id}, the errors and the job route', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string; schema?: unknown }[];
            responses: Record<string, unknown>;
          }
        >
      >;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; enum?: string[] }> };
    };
    const del = doc.paths['/v1/users/{external_id}']!.delete!;
    expect(del.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'messages', in: 'query' })]),
    );
    expect(doc.components.schemas.ErasureMode!.enum).toEqual(['keep', 'anonymize', 'delete']);
    expect(Object.keys(del.responses)).toEqual(
      expect.arrayContaining(['202', '204', '400', '401', '403', '404']),
    );
    expect(Object.keys(doc.components.schemas.ErasureAccepted!.properties!)).toEqual(['job_id']);
    expect(Object.keys(doc.paths['/v1/erasures/{id}'] ?? {})).toEqual(['get']);
  });

  describe('more than 1,000 messages', () => {
    /** `n` messages by the user, inserted with SQL (oldest first, a millisecond apart), spread over channels. */
    async function bulk(ws: TestWorkspace, user: TestUser, channelIds: string[], n: number, tag: string) {
      await db.query(
        `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + g % cardinality($2::uuid[])], $3::uuid, $6::text, 'text', $4 || ' ' || g,
                now() - interval '1 hour' + make_interval(secs => g / 1000.0)
           FROM generate_series(1, $5) g`,
        [ws.id, channelIds, user.id, tag, n, user.id],
      );
    }

    async function countOf(
      userId: string | null,
      like: string,
    ): Promise<{ live: number; blank: number; mine: number }> {
      const [r] = await db.query(
        `SELECT count(*) FILTER (WHERE deleted_at IS NULL)::int AS live, count(*) FILTER (WHERE deleted_at IS NOT NULL)::int AS blank,
                count(*) FILTER (WHERE user_id = $1::uuid)::int AS mine
           FROM messages WHERE sender_key = $2::text AND (content LIKE $3 OR content = '')`,
        [userId, userId, like],
      );
      return r;
    }

    it('exactly 1,000 messages are erased within the request (204)', async () => {
      const { ws, ch, bo } = await room(t);
      await bulk(ws, bo, [ch.id], 1000, 'thousand');
      expect((await erase(ws, 'bo', 'keep')).status).toBe(204);
      expect(await countOf(bo.id, 'thousand%')).toEqual({ live: 1000, blank: 0, mine: 0 });
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM users WHERE id = $1`, [bo.id]);
      expect(n).toBe(0);
    });

    it('1,001 messages answer 202 {job_id}; the user is gone at once and the job finishes', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const second = await group(ws, 'ana', ['bo']);
      await bulk(ws, bo, [ch.id, second.id], 1001, 'bulk');
      const mine = await send(cy, ch.id, 'cy stays');
      const boIssued = await issuedToken(ws, 'bo');
      const before = await lastSeq(ana, ch.id);

      const res = await erase(ws, 'bo', 'anonymize');
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      await expectUserGone(ws, bo, boIssued);
      const again = await ws.api.put('/v1/users/bo', {});
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(bo.id);
      // the author shows as nobody from the start, whatever the job has done yet
      for (const m of (await history(ana.api, ch.id, { limit: 100 })).messages.filter(
        (x) => x.id !== mine.id,
      )) {
        expect(m.user).toBeNull();
      }

      const done = await poll(
        async () => {
          const e = await ws.api.get(`/v1/erasures/${res.body.job_id as string}`);
          expect(e.status).toBe(200);
          return e.body.status === 'done' ? e.body : null;
        },
        'the erasure job',
        90_000,
        250,
      );
      expect(done).toMatchObject({
        id: res.body.job_id,
        messages: 'anonymize',
        messages_done: 1001,
        finished_at: expect.any(String),
      });
      expect(await countOf(bo.id, 'bulk%')).toEqual({ live: 0, blank: 1001, mine: 0 });
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM users WHERE id = $1`, [bo.id]);
      expect(n).toBe(0);
      const events = await eventsAfter(ana, ch.id, before);
      const deleted = events.filter((e) => e.type === 'message.deleted');
      expect(new Set(deleted.map((e) => e.data.id)).size).toBe(deleted.length);
      expect(deleted.length).toBe(500); // of 1,001 spread over two channels, this one's
      expect(deleted.some((e) => e.data.id === mine.id)).toBe(false);
      expect((await one(ana, ch.id, mine.id))!.content).toBe('cy stays');
      // another workspace's key does not see the job; a user token may not
      const other = await room(t);
      expectError(await other.ws.api.get(`/v1/erasures/${res.body.job_id as string}`), 404, 'NOT_FOUND');
      expectError(await ana.api.get(`/v1/erasures/${res.body.job_id as string}`), 403, 'FORBIDDEN');
    });
  });
});
