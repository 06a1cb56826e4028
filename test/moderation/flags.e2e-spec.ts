import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { group, history, messageEvents, Msg, room, send, sleep } from '../messages/helpers';
import { createWebhook, eventOf } from '../webhooks/helpers';
import { audit, moderate, PROFANE } from './helpers';

interface Flag {
  id: string;
  target_type: 'message' | 'user';
  message_id?: string;
  user_id: string | null;
  by_user: { id: string; external_id: string; name: string | null } | null;
  reason: string | null;
  created_at: string;
}

interface Entry {
  id: string;
  target_type: 'message' | 'user';
  message?: Msg;
  user?: { id: string; external_id: string; name: string | null; metadata: Record<string, unknown> };
  flag_count: number;
  reasons: string[];
  first_flagged_at: string;
  last_flagged_at: string;
  status: 'open' | 'resolved';
  resolution?: { action: string; resolved_at: string; duration_seconds: number | null };
}

interface EntryPage {
  flags: Entry[];
  has_more: boolean;
  next_cursor: string | null;
}

function flagMessage(user: TestUser, messageId: string, body: Record<string, unknown> = {}) {
  return user.api.post(`/v1/messages/${messageId}/flag`, body);
}

function flagUser(user: TestUser, externalId: string, body: Record<string, unknown> = {}) {
  return user.api.post(`/v1/users/${externalId}/flag`, body);
}

async function queue(ws: TestWorkspace, query: Record<string, string | number> = {}): Promise<EntryPage> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await ws.api.get(`/v1/moderation/flags?${qs.toString()}`);
  if (res.status !== 200) throw new Error(`queue answered ${res.status} ${res.text}`);
  return res.body as EntryPage;
}

async function resolve(ws: TestWorkspace, id: string, body: Record<string, unknown>): Promise<Entry> {
  const res = await ws.api.post(`/v1/moderation/flags/${id}/resolve`, body);
  if (res.status !== 200) throw new Error(`resolve answered ${res.status} ${res.text}`);
  return res.body as Entry;
}

describe('flags and the review queue (CONTRACT §19)', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  describe('flagging a message', () => {
    it('201 with the flag, then 200 with the same flag (its first reason) when the reporter flags again', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'hello');
      const first = await flagMessage(bo, m.id, { reason: '  spam  ' });
      expect(first.status).toBe(201);
      const flag = first.body as Flag;
      expect(flag).toEqual({
        id: expect.any(String),
        target_type: 'message',
        message_id: m.id,
        user_id: ana.id,
        by_user: { id: bo.id, external_id: 'bo', name: 'Bo' },
        reason: 'spam',
        created_at: expect.any(String),
      });
      const again = await flagMessage(bo, m.id, { reason: 'something else' });
      expect([again.status, again.body]).toEqual([200, flag]);
      const none = await flagMessage(bo, m.id);
      expect([none.status, (none.body as Flag).id]).toEqual([200, flag.id]);
    });

    it('a reason is optional; an empty one is no reason', async () => {
      const { ch, ana, bo, cy } = await room(t);
      const m = await send(ana, ch.id, 'hello');
      expect((await flagMessage(bo, m.id)).body).toMatchObject({ reason: null });
      expect((await flagMessage(cy, m.id, { reason: '   ' })).body).toMatchObject({ reason: null });
    });

    it('400 for the reporter’s own message, a system message, a long reason or an unknown field', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const own = await send(bo, ch.id, 'mine');
      expectError(await flagMessage(bo, own.id), 400, 'VALIDATION_ERROR');
      const sys = await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'system says',
        system: true,
      });
      expect(sys.status).toBe(201);
      expectError(await flagMessage(bo, (sys.body as Msg).id), 400, 'VALIDATION_ERROR');
      const m = await send(ana, ch.id, 'hello');
      expectError(await flagMessage(bo, m.id, { reason: 'x'.repeat(501) }), 400, 'VALIDATION_ERROR');
      expectError(await flagMessage(bo, m.id, { reason: 42 }), 400, 'VALIDATION_ERROR');
      expectError(await flagMessage(bo, m.id, { severity: 'high' }), 400, 'VALIDATION_ERROR');
      expect((await flagMessage(bo, m.id, { reason: 'x'.repeat(500) })).status).toBe(201);
      expect((await queue(ws)).flags.map((e) => e.message?.id)).toEqual([m.id]);
    });

    it('404 for a message the reporter cannot see: another channel, another workspace, no such id', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const dan = await ws.user('dan', 'Dan');
      const other = await group(ws, 'ana', ['cy']);
      const hidden = await send(ana, other.id, 'not for bo');
      expectError(await flagMessage(bo, hidden.id), 404, 'NOT_FOUND');
      const m = await send(ana, ch.id, 'in the room');
      expectError(await flagMessage(dan, m.id), 404, 'NOT_FOUND');
      const elsewhere = await room(t);
      expectError(await flagMessage(elsewhere.bo, m.id), 404, 'NOT_FOUND');
      expectError(await flagMessage(bo, '0190a000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
      expectError(await flagMessage(bo, 'not-a-uuid'), 404, 'NOT_FOUND');
      expect((await queue(ws)).flags).toEqual([]);
    });

    it('422 MESSAGE_DELETED for an unsent message', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'soon gone');
      expect((await ana.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
      expectError(await flagMessage(bo, m.id), 422, 'MESSAGE_DELETED');
    });

    it('a backend key flags on behalf of user_external_id, which it must name', async () => {
      const { ws, ch, ana } = await room(t);
      const m = await send(ana, ch.id, 'hello');
      expectError(
        await ws.api.post(`/v1/messages/${m.id}/flag`, { reason: 'spam' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post(`/v1/messages/${m.id}/flag`, { user_external_id: 'nobody' }),
        400,
        'VALIDATION_ERROR',
      );
      const res = await ws.api.post(`/v1/messages/${m.id}/flag`, { user_external_id: 'bo', reason: 'spam' });
      expect([res.status, (res.body as Flag).by_user?.external_id]).toEqual([201, 'bo']);
      expect((await flagMessage(await ws.user('bo'), m.id)).status).toBe(200);
    });
  });

  describe('flagging a user', () => {
    it('201, then 200 with the same flag; the user must share a channel with the reporter', async () => {
      const { ws, bo } = await room(t);
      const res = await flagUser(bo, 'ana', { reason: 'harassment' });
      expect(res.status).toBe(201);
      const ana = await ws.api.get('/v1/users/ana');
      expect(res.body).toEqual({
        id: expect.any(String),
        target_type: 'user',
        user_id: (ana.body as { id: string }).id,
        by_user: { id: bo.id, external_id: 'bo', name: 'Bo' },
        reason: 'harassment',
        created_at: expect.any(String),
      });
      const again = await flagUser(bo, 'ana', { reason: 'again' });
      expect([again.status, again.body]).toEqual([200, res.body]);
    });

    it('400 for yourself; 404 for a user sharing no channel, an unknown one or one of another workspace', async () => {
      const { ws, bo } = await room(t);
      await ws.user('dan', 'Dan');
      expectError(await flagUser(bo, 'bo'), 400, 'VALIDATION_ERROR');
      expectError(await flagUser(bo, 'dan'), 404, 'NOT_FOUND');
      expectError(await flagUser(bo, 'nobody'), 404, 'NOT_FOUND');
      const other = await newWorkspace(t);
      await other.user('eve');
      expectError(await flagUser(bo, 'eve'), 404, 'NOT_FOUND');
      expectError(await flagUser(bo, 'bad id!'), 400, 'VALIDATION_ERROR');
      expect((await queue(ws)).flags).toEqual([]);
    });
  });

  describe('the review queue', () => {
    it('one entry per target, oldest first, with flag_count, the distinct reasons and the first and last flag times', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const dan = await ws.user('dan', 'Dan');
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan'] })).status,
      ).toBe(200);
      const m1 = await send(ana, ch.id, 'first');
      const m2 = await send(cy, ch.id, 'second');
      expect((await flagMessage(bo, m1.id, { reason: 'spam' })).status).toBe(201);
      await sleep(5);
      expect((await flagUser(bo, 'cy', { reason: 'rude' })).status).toBe(201);
      expect((await flagMessage(bo, m2.id)).status).toBe(201);
      expect((await flagMessage(cy, m1.id, { reason: 'rude' })).status).toBe(201);
      await sleep(5);
      expect((await flagMessage(dan, m1.id, { reason: 'spam' })).status).toBe(201);

      const page = await queue(ws);
      expect([page.has_more, page.next_cursor]).toEqual([false, null]);
      expect(
        page.flags.map((e) => [e.target_type, e.message?.id ?? e.user?.external_id, e.flag_count]),
      ).toEqual([
        ['message', m1.id, 3],
        ['user', 'cy', 1],
        ['message', m2.id, 1],
      ]);
      const [e1, u, e2] = page.flags as [Entry, Entry, Entry];
      expect(e1.reasons).toEqual(['spam', 'rude']);
      expect(e1.status).toBe('open');
      expect(e1).not.toHaveProperty('resolution');
      expect(e1).not.toHaveProperty('user');
      expect(Date.parse(e1.first_flagged_at)).toBeLessThan(Date.parse(e1.last_flagged_at));
      // the message as history shows it to a backend key
      const [shown] = (await history(ws.api, ch.id, { limit: 2 })).messages.filter((x) => x.id === m1.id);
      expect(e1.message).toEqual(shown);
      expect(u.user).toMatchObject({ id: cy.id, external_id: 'cy', name: 'Cy', metadata: {} });
      expect(u).not.toHaveProperty('message');
      expect(u.reasons).toEqual(['rude']);
      expect(e2.reasons).toEqual([]);
      expect(e2.first_flagged_at).toBe(e2.last_flagged_at);
      expect((await queue(ws, { status: 'resolved' })).flags).toEqual([]);
    });

    it('pages with limit and before; bad parameters are 400; a user JWT is 403', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const m = await send(i % 2 ? ana : cy, ch.id, `m${i}`);
        expect((await flagMessage(bo, m.id)).status).toBe(201);
        ids.push(m.id);
      }
      const seen: string[] = [];
      let before: string | null = null;
      for (;;) {
        const page: EntryPage = await queue(ws, { limit: 2, ...(before ? { before } : {}) });
        seen.push(...page.flags.map((e) => e.message!.id));
        expect(page.has_more).toBe(page.next_cursor !== null);
        if (!page.has_more) break;
        before = page.next_cursor;
      }
      expect(seen).toEqual(ids);

      expectError(await ws.api.get('/v1/moderation/flags?status=closed'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/moderation/flags?limit=0'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/moderation/flags?limit=101'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/moderation/flags?before=garbage'), 400, 'VALIDATION_ERROR');
      const open = await queue(ws, { limit: 1 });
      // an open page's cursor is not a resolved page's
      expectError(
        await ws.api.get(`/v1/moderation/flags?status=resolved&before=${open.next_cursor}`),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await bo.api.get('/v1/moderation/flags'), 403, 'FORBIDDEN');
      expectError(
        await bo.api.post(`/v1/moderation/flags/${open.flags[0]!.id}/resolve`, { action: 'dismiss' }),
        403,
        'FORBIDDEN',
      );
    });

    it('resolved entries come most recently resolved first, paged with their own cursor', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const m = await send(ana, ch.id, `m${i}`);
        expect((await flagMessage(bo, m.id)).status).toBe(201);
      }
      const open = (await queue(ws)).flags;
      for (const e of [open[2]!, open[0]!, open[3]!, open[1]!]) {
        await resolve(ws, e.id, { action: 'dismiss' });
        ids.unshift(e.id);
      }
      const first = await queue(ws, { status: 'resolved', limit: 3 });
      expect([first.flags.map((e) => e.id), first.has_more]).toEqual([ids.slice(0, 3), true]);
      const rest = await queue(ws, { status: 'resolved', limit: 3, before: first.next_cursor! });
      expect([rest.flags.map((e) => e.id), rest.has_more, rest.next_cursor]).toEqual([
        ids.slice(3),
        false,
        null,
      ]);
      expectError(
        await ws.api.get(`/v1/moderation/flags?before=${first.next_cursor}`),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('a deleted channel takes its entries along; a deleted reporter’s flag still counts', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const m = await send(ana, ch.id, 'hello');
      expect((await flagMessage(bo, m.id, { reason: 'spam' })).status).toBe(201);
      expect((await flagMessage(cy, m.id, { reason: 'rude' })).status).toBe(201);
      expect((await ws.api.delete('/v1/users/cy')).status).toBe(204);
      expect((await queue(ws)).flags.map((e) => [e.flag_count, e.reasons])).toEqual([[2, ['spam', 'rude']]]);
      expect((await ws.api.delete(`/v1/channels/${ch.id}`)).status).toBe(204);
      expect((await queue(ws)).flags).toEqual([]);
    });

    it('automatic moderation’s flag action files the message as a flag by the system, with the message', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const url = rx.url(200);
      await createWebhook(ws, url, ['message.flagged']);
      await moderate(ws, { action: 'flag', rules: ['profanity'] });
      const m = await send(ana, ch.id, PROFANE);
      const [entry] = (await queue(ws)).flags;
      expect(entry).toMatchObject({
        target_type: 'message',
        flag_count: 1,
        reasons: ['automatic moderation: profanity'],
        status: 'open',
      });
      expect(entry!.message?.id).toBe(m.id);
      const [hook] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'message.flagged' });
      expect(hook!.json.data).toEqual({
        flag_id: expect.any(String),
        target_type: 'message',
        message_id: m.id,
        user_id: ana.id,
        by_user: null,
        reason: 'automatic moderation: profanity',
      });
      // a user's flag joins the same entry
      expect((await flagMessage(bo, m.id, { reason: 'swearing' })).status).toBe(201);
      const [joined] = (await queue(ws)).flags;
      expect([joined!.id, joined!.flag_count, joined!.reasons]).toEqual([
        entry!.id,
        2,
        ['automatic moderation: profanity', 'swearing'],
      ]);
      // an edit that is flagged again counts again
      expect((await ana.api.patch(`/v1/messages/${m.id}`, { content: `${PROFANE}!` })).status).toBe(200);
      expect((await queue(ws)).flags.map((e) => e.flag_count)).toEqual([3]);
      // mask and reject do not file anything
      await moderate(ws, { action: 'mask', rules: ['profanity'] });
      await send(ana, ch.id, PROFANE);
      expect((await queue(ws)).flags).toHaveLength(1);
    });
  });

  describe('resolving', () => {
    it('dismiss: the entry is resolved, the message untouched, the audit trail records it; later flags open a new entry', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const m = await send(ana, ch.id, 'borderline');
      expect((await flagMessage(bo, m.id, { reason: 'meh' })).status).toBe(201);
      const [entry] = (await queue(ws)).flags;
      const done = await resolve(ws, entry!.id, { action: 'dismiss' });
      expect(done).toMatchObject({
        id: entry!.id,
        status: 'resolved',
        flag_count: 1,
        reasons: ['meh'],
        resolution: { action: 'dismiss', resolved_at: expect.any(String), duration_seconds: null },
      });
      expect(done.message?.content).toBe('borderline');
      expect((await history(ws.api, ch.id)).messages[0]!.content).toBe('borderline');
      expect((await queue(ws)).flags).toEqual([]);
      expect((await queue(ws, { status: 'resolved' })).flags).toEqual([done]);
      expect((await audit(ws, { rule: 'review' })).entries).toEqual([
        expect.objectContaining({
          channel_id: ch.id,
          user_id: ana.id,
          message_id: m.id,
          rule: 'review',
          action: 'dismiss',
          excerpt: 'borderline',
        }),
      ]);

      // resolving again changes nothing (200, the entry as it is), whatever the action
      expect(await resolve(ws, entry!.id, { action: 'unsend_message' })).toEqual(done);
      expect((await history(ws.api, ch.id)).messages[0]!.content).toBe('borderline');
      expect((await audit(ws, { rule: 'review' })).entries).toHaveLength(1);

      // bo flagged it once and for all; cy's flag opens a new entry
      expect((await flagMessage(bo, m.id)).status).toBe(200);
      expect((await queue(ws)).flags).toEqual([]);
      expect((await flagMessage(cy, m.id, { reason: 'still bad' })).status).toBe(201);
      const [fresh] = (await queue(ws)).flags;
      expect(fresh).toMatchObject({ flag_count: 1, reasons: ['still bad'], status: 'open' });
      expect(fresh!.id).not.toBe(entry!.id);
    });

    it('unsend_message: the one unsend (blanked, message.deleted, unpinned), resolved and audited', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const url = rx.url(200);
      await createWebhook(ws, url, ['message.deleted']);
      const m = await send(ana, ch.id, 'remove me please');
      expect((await ws.api.post(`/v1/messages/${m.id}/pin`)).status).toBe(200);
      expect((await flagMessage(bo, m.id, { reason: 'spam' })).status).toBe(201);
      const [entry] = (await queue(ws)).flags;
      const done = await resolve(ws, entry!.id, { action: 'unsend_message' });
      expect(done).toMatchObject({
        status: 'resolved',
        resolution: { action: 'unsend_message', duration_seconds: null },
      });
      expect(done.message).toMatchObject({
        id: m.id,
        content: '',
        deleted_at: expect.any(String),
        pinned_at: null,
      });
      const [h] = (await history(bo.api, ch.id)).messages;
      expect([h!.id, h!.content, h!.deleted_at]).toEqual([m.id, '', done.message!.deleted_at]);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual([
        'message.created',
        'message.pinned',
        'message.deleted',
        'message.unpinned',
      ]);
      const [hook] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'message.deleted' });
      expect(hook!.json.data.message.id).toBe(m.id);
      // the trail keeps what the message said
      expect((await audit(ws)).entries[0]).toMatchObject({
        message_id: m.id,
        user_id: ana.id,
        channel_id: ch.id,
        rule: 'review',
        action: 'unsend_message',
        excerpt: 'remove me please',
      });
      // a message already unsent by its author: the resolution still resolves, with no second event
      const m2 = await send(ana, ch.id, 'second');
      expect((await flagMessage(bo, m2.id)).status).toBe(201);
      const [e2] = (await queue(ws)).flags;
      expect((await ana.api.delete(`/v1/messages/${m2.id}`)).status).toBe(200);
      expect((await resolve(ws, e2!.id, { action: 'unsend_message' })).status).toBe('resolved');
      expect((await messageEvents(t, ch.id)).filter((e) => e.type === 'message.deleted')).toHaveLength(2);
    });

    it('ban_user bans the message’s author workspace-wide (for duration_seconds), announced and audited', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const url = rx.url(200);
      await createWebhook(ws, url, ['user.banned']);
      const m = await send(ana, ch.id, 'abuse');
      expect((await flagMessage(bo, m.id, { reason: 'abuse' })).status).toBe(201);
      const [entry] = (await queue(ws)).flags;
      const done = await resolve(ws, entry!.id, { action: 'ban_user', duration_seconds: 3600 });
      expect(done).toMatchObject({
        status: 'resolved',
        resolution: { action: 'ban_user', duration_seconds: 3600 },
        message: { id: m.id, content: 'abuse' },
      });
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'am I banned?' }),
        403,
        'BANNED',
      );
      expect((await cy.api.post(`/v1/channels/${ch.id}/messages`, { content: 'not me' })).status).toBe(201);
      const bans = (await ws.api.get('/v1/bans')).body as {
        bans: {
          user: { id: string };
          channel_id: string | null;
          reason: string;
          shadow: boolean;
          expires_at: string;
        }[];
      };
      expect(bans.bans).toHaveLength(1);
      expect(bans.bans[0]).toMatchObject({
        user: { id: ana.id },
        channel_id: null,
        reason: `flag review ${entry!.id}`,
        shadow: false,
      });
      const left = Date.parse(bans.bans[0]!.expires_at) - Date.now();
      expect(left).toBeGreaterThan(3500_000);
      expect(left).toBeLessThanOrEqual(3600_000);
      const [hook] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'user.banned' });
      expect(hook!.json.data).toMatchObject({ user: { id: ana.id }, channel_id: null, shadow: false });
      expect((await audit(ws, { rule: 'review' })).entries[0]).toMatchObject({
        message_id: m.id,
        user_id: ana.id,
        action: 'ban_user',
      });
    });

    it('shadow_ban_user on a user entry: their sends succeed but nobody else sees them', async () => {
      const { ws, ch, ana, bo } = await room(t);
      expect((await flagUser(bo, 'ana', { reason: 'spammer' })).status).toBe(201);
      const [entry] = (await queue(ws)).flags;
      const done = await resolve(ws, entry!.id, { action: 'shadow_ban_user' });
      expect(done).toMatchObject({
        user: { id: ana.id },
        resolution: { action: 'shadow_ban_user', duration_seconds: null },
      });
      const sm = await send(ana, ch.id, 'buy now');
      expect((await history(bo.api, ch.id)).messages.map((x) => x.id)).not.toContain(sm.id);
      const banned = (await ws.api.get('/v1/bans')).body as {
        bans: { shadow: boolean; expires_at: string | null }[];
      };
      expect(banned.bans.map((b) => [b.shadow, b.expires_at])).toEqual([[true, null]]);
      // another user's shadowed message cannot be flagged: nobody else can see it
      expectError(await flagMessage(bo, sm.id), 404, 'NOT_FOUND');
      // nor for a backend key acting for another user
      expect((await ws.api.post(`/v1/messages/${sm.id}/flag`, { user_external_id: 'cy' })).status).toBe(404);
      expect((await queue(ws, { status: 'resolved' })).flags[0]).toMatchObject({
        id: entry!.id,
        status: 'resolved',
      });
    });

    it('a ban of a message whose author was deleted is 404; the entry can still be dismissed', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'orphan');
      expect((await flagMessage(bo, m.id)).status).toBe(201);
      expect((await ws.api.delete('/v1/users/ana')).status).toBe(204);
      const [entry] = (await queue(ws)).flags;
      expect(entry!.message).toMatchObject({ id: m.id, user_id: null, user: null });
      expectError(
        await ws.api.post(`/v1/moderation/flags/${entry!.id}/resolve`, { action: 'ban_user' }),
        404,
        'NOT_FOUND',
      );
      expect((await queue(ws)).flags.map((e) => e.status)).toEqual(['open']);
      expect((await resolve(ws, entry!.id, { action: 'dismiss' })).status).toBe('resolved');
      expect((await audit(ws, { rule: 'review' })).entries[0]).toMatchObject({
        user_id: null,
        message_id: m.id,
      });
    });

    it('400 for unsend_message on a user entry, duration_seconds without a ban, or a bad action; 404 for an unknown entry', async () => {
      const { ws, ch, ana, bo } = await room(t);
      expect((await flagUser(bo, 'ana')).status).toBe(201);
      const m = await send(ana, ch.id, 'hello');
      expect((await flagMessage(bo, m.id)).status).toBe(201);
      const [u, e] = (await queue(ws)).flags as [Entry, Entry];
      expectError(
        await ws.api.post(`/v1/moderation/flags/${u.id}/resolve`, { action: 'unsend_message' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post(`/v1/moderation/flags/${e.id}/resolve`, {
          action: 'dismiss',
          duration_seconds: 60,
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post(`/v1/moderation/flags/${e.id}/resolve`, { action: 'delete' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await ws.api.post(`/v1/moderation/flags/${e.id}/resolve`, {}), 400, 'VALIDATION_ERROR');
      expectError(
        await ws.api.post(`/v1/moderation/flags/${e.id}/resolve`, {
          action: 'ban_user',
          duration_seconds: 0,
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post('/v1/moderation/flags/0190a000-0000-7000-8000-000000000000/resolve', {
          action: 'dismiss',
        }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await ws.api.post('/v1/moderation/flags/nope/resolve', { action: 'dismiss' }),
        404,
        'NOT_FOUND',
      );
      expect((await queue(ws)).flags.map((x) => x.status)).toEqual(['open', 'open']);
      // a user entry resolves with dismiss, audited without a channel
      await resolve(ws, u.id, { action: 'dismiss' });
      expect((await audit(ws)).entries[0]).toMatchObject({
        channel_id: null,
        user_id: ana.id,
        message_id: null,
        action: 'dismiss',
        excerpt: '',
      });
    });
  });

  it('webhooks: message.flagged and user.flagged with the flag, its target and its reporter', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const url = rx.url(200);
    await createWebhook(ws, url, ['message.flagged', 'user.flagged']);
    const m = await send(ana, ch.id, 'hello');
    const mf = (await flagMessage(bo, m.id, { reason: 'spam' })).body as Flag;
    const uf = (await flagUser(bo, 'ana')).body as Flag;
    await flagMessage(bo, m.id); // a repeat fires nothing
    const hooks = await rx.waitFor(url, { count: 2 });
    const bob = { id: bo.id, external_id: 'bo', name: 'Bo' };
    // deliveries run in parallel: two events may arrive in either order
    const byEvent = hooks
      .map((r) => [eventOf(r), r.json.data])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(byEvent).toEqual([
      [
        'message.flagged',
        {
          flag_id: mf.id,
          target_type: 'message',
          message_id: m.id,
          user_id: ana.id,
          by_user: bob,
          reason: 'spam',
        },
      ],
      ['user.flagged', { flag_id: uf.id, target_type: 'user', user_id: ana.id, by_user: bob, reason: null }],
    ]);
    await sleep(300);
    expect(rx.received(url)).toHaveLength(2);
    const bad = await ws.api.post('/v1/webhooks', { url, events: ['message.reported'] });
    expectError(bad, 400, 'VALIDATION_ERROR');
  });

  it('tenancy: another workspace sees none of the entries and cannot resolve them', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'hello');
    expect((await flagMessage(bo, m.id)).status).toBe(201);
    const [entry] = (await queue(ws)).flags;
    const other = await newWorkspace(t);
    expect((await queue(other)).flags).toEqual([]);
    expect((await queue(other, { status: 'resolved' })).flags).toEqual([]);
    expectError(
      await other.api.post(`/v1/moderation/flags/${entry!.id}/resolve`, { action: 'dismiss' }),
      404,
      'NOT_FOUND',
    );
    expect((await queue(ws)).flags.map((e) => e.status)).toEqual(['open']);
  });

  it('the OpenAPI document has the routes, their bodies and answers', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(Object.keys(doc.paths['/v1/messages/{id}/flag']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '201', '400', '401', '403', '404', '422']),
    );
    expect(Object.keys(doc.paths['/v1/users/{external_id}/flag']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '201', '400', '404']),
    );
    expect(Object.keys(doc.paths['/v1/moderation/flags']!.get!.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403']),
    );
    expect(Object.keys(doc.paths['/v1/moderation/flags/{id}/resolve']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '400', '404']),
    );
    expect(Object.keys(doc.components.schemas.FlagEntry!.properties!)).toEqual(
      expect.arrayContaining([
        'id',
        'target_type',
        'message',
        'user',
        'flag_count',
        'reasons',
        'first_flagged_at',
        'last_flagged_at',
        'status',
        'resolution',
      ]),
    );
    expect(Object.keys(doc.components.schemas.ResolveFlagDto!.properties!).sort()).toEqual([
      'action',
      'duration_seconds',
    ]);
    expect(Object.keys(doc.components.schemas.CreateFlagDto!.properties!).sort()).toEqual([
      'reason',
      'user_external_id',
    ]);
  });
});
