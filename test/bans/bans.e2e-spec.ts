import { FakeFcm } from '../push/fcm';
import { group, history, room, send, sleep } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Receiver, ReceivedRequest } from '../support/receiver';
import { closeAllSockets, connectError, connectSocket, TestSocket } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

const until = async <T>(
  what: string,
  fn: () => Promise<T | undefined | false | null>,
  timeoutMs = 10_000,
): Promise<T> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};

const disconnected = (s: TestSocket) =>
  new Promise<string>((resolve) => {
    if (!s.socket.connected) resolve('already');
    s.socket.once('disconnect', (reason) => resolve(reason));
  });

/** CONTRACT §19: bans (workspace, channel, by a group admin, with expiry) and shadow bans, through every surface. */
describe('bans and shadow bans (CONTRACT §19)', () => {
  const fcm = new FakeFcm();
  let t: TestApp;
  let rx: Receiver;

  beforeAll(async () => {
    fcm.start();
    rx = await Receiver.start();
    t = await startTestApp({ SERVICE_PUSH_SERVICE_ACCOUNT_FILE: fcm.serviceAccountFile });
  });
  afterAll(async () => {
    closeAllSockets();
    await t?.close();
    await rx?.close();
    fcm.stop();
  });

  describe('workspace bans', () => {
    it('refuse sends (REST, backend for the user), edits and reactions with 403 BANNED; reads and unsend stay; lifting restores', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const own = await send(bo, ch.id, 'before the ban');
      const gone = await send(bo, ch.id, 'to unsend');
      const target = await send(ana, ch.id, 'react to me');
      const sock = await connectSocket(t.baseUrl, ana.token);

      const banned = await ws.api.post('/v1/users/bo/ban', { reason: 'spam' });
      expect(banned.status).toBe(200);
      expect(banned.body).toMatchObject({
        user: { id: bo.id, external_id: 'bo' },
        channel_id: null,
        reason: 'spam',
        shadow: false,
        expires_at: null,
      });

      expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello?' }), 403, 'BANNED');
      expectError(
        await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'for bo', user_external_id: 'bo' }),
        403,
        'BANNED',
      );
      expectError(await bo.api.patch(`/v1/messages/${own.id}`, { content: 'edited' }), 403, 'BANNED');
      expectError(await bo.api.post(`/v1/messages/${target.id}/reactions`, { emoji: '👍' }), 403, 'BANNED');
      expect((await bo.api.delete(`/v1/messages/${gone.id}`)).status).toBe(200);
      expect((await history(bo.api, ch.id)).messages.map((m) => m.content)).toEqual([
        'react to me',
        '',
        'before the ban',
      ]);
      expect((await bo.api.get('/v1/me/channels')).status).toBe(200);
      // the backend itself still moderates
      expect((await ws.api.patch(`/v1/messages/${own.id}`, { content: 'moderated' })).status).toBe(200);

      const list = await ws.api.get('/v1/bans');
      expect(list.status).toBe(200);
      expect(list.body.bans.map((b: { user: { external_id: string } }) => b.user.external_id)).toEqual([
        'bo',
      ]);

      expect((await ws.api.delete('/v1/users/bo/ban')).status).toBe(204);
      expect((await ws.api.delete('/v1/users/bo/ban')).status).toBe(204); // nothing to lift: still 204
      const back = await send(bo, ch.id, 'free again');
      await sock.waitFor('message.new', (e) => e.data.id === back.id);
      expect((await ws.api.get('/v1/bans')).body.bans).toEqual([]);
      expectError(await ws.api.post('/v1/users/nobody/ban', {}), 404, 'NOT_FOUND');
    });

    it('banning again replaces reason, expiry and kind (one entry); a ban with duration_seconds runs out by itself', async () => {
      const { ws, ch, bo } = await room(t);
      await ws.api.post('/v1/users/bo/ban', { reason: 'first', shadow: true });
      const again = await ws.api.post('/v1/users/bo/ban', { reason: 'second', duration_seconds: 1 });
      expect(again.body).toMatchObject({ reason: 'second', shadow: false });
      expect(Date.parse(again.body.expires_at) - Date.parse(again.body.created_at)).toBe(1000);
      const bans = (await ws.api.get('/v1/bans')).body.bans;
      expect(bans).toHaveLength(1);
      expect(bans[0].id).toBe(again.body.id);
      expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x' }), 403, 'BANNED');
      await sleep(1100);
      expect((await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'after expiry' })).status).toBe(
        201,
      );
      expect((await ws.api.get('/v1/bans')).body.bans).toEqual([]); // an expired ban is no ban
    });

    it('refuse the socket handshake with BANNED and close open sockets at once; a shadow or channel ban does neither', async () => {
      const { ws, ch, bo, cy } = await room(t);
      const open = await connectSocket(t.baseUrl, bo.token);
      const closed = disconnected(open);
      await ws.api.post('/v1/users/bo/ban', {});
      expect(await closed).toBe('io server disconnect');
      const refused = await connectError(t.baseUrl, bo.token);
      expect(refused.data?.error?.code ?? refused.data?.code).toBe('BANNED');

      await ws.api.post('/v1/users/cy/ban', { shadow: true });
      expect((await ws.api.post(`/v1/channels/${ch.id}/bans`, { user_external_id: 'cy' })).status).toBe(200);
      const cySock = await connectSocket(t.baseUrl, cy.token);
      await sleep(300);
      expect(cySock.socket.connected).toBe(true);

      await ws.api.delete('/v1/users/bo/ban');
      expect((await connectSocket(t.baseUrl, bo.token)).socket.connected).toBe(true);
    });

    it('validate their input and stay in their workspace', async () => {
      const { ws, bo } = await room(t);
      const other = await room(t);
      expectError(await ws.api.post('/v1/users/bo/ban', { duration_seconds: 0 }), 400, 'VALIDATION_ERROR');
      expectError(
        await ws.api.post('/v1/users/bo/ban', { reason: 'x'.repeat(501) }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await ws.api.post('/v1/users/bo/ban', { shadow: 'yes' }), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/bans?before=garbage'), 400, 'VALIDATION_ERROR');
      expectError(await bo.api.post('/v1/users/cy/ban', {}), 403, 'FORBIDDEN');
      await ws.api.post('/v1/users/bo/ban', {});
      // the same external id in another workspace is another user
      expect((await other.ws.api.get('/v1/bans')).body.bans).toEqual([]);
      expect(
        (await other.bo.api.post(`/v1/channels/${other.ch.id}/messages`, { content: 'fine' })).status,
      ).toBe(201);
    });

    it('page newest first with the cursor', async () => {
      const { ws } = await room(t);
      const names = ['u1', 'u2', 'u3'];
      await ws.users(...names);
      for (const n of names) await ws.api.post(`/v1/users/${n}/ban`, {});
      const first = await ws.api.get('/v1/bans?limit=2');
      expect(first.body.bans.map((b: { user: { external_id: string } }) => b.user.external_id)).toEqual([
        'u3',
        'u2',
      ]);
      expect(first.body.has_more).toBe(true);
      const second = await ws.api.get(`/v1/bans?limit=2&before=${first.body.next_cursor}`);
      expect(second.body.bans.map((b: { user: { external_id: string } }) => b.user.external_id)).toEqual([
        'u1',
      ]);
      expect([second.body.has_more, second.body.next_cursor]).toEqual([false, null]);
    });
  });

  describe('channel bans', () => {
    it('refuse sends (REST and socket) and reactions in that channel only; listed by channel; lifted by DELETE', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const other = await group(ws, 'ana', ['bo']);
      const m = await send(ana, ch.id, 'react here');
      const res = await ws.api.post(`/v1/channels/${ch.external_id}/bans`, {
        user_external_id: 'bo',
        reason: 'off-topic',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        reason: 'off-topic',
        banned_by: null,
      });
      expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hi' }), 403, 'BANNED');
      expectError(await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }), 403, 'BANNED');
      const sock = await connectSocket(t.baseUrl, bo.token);
      const ack = await sock.emitAck('message.send', { channel_id: ch.id, content: 'via socket' });
      expect([ack.ok, ack.error?.code]).toEqual([false, 'BANNED']);
      expect((await bo.api.post(`/v1/channels/${other.id}/messages`, { content: 'elsewhere' })).status).toBe(
        201,
      );
      expect((await ws.api.get(`/v1/bans?channel=${ch.id}`)).body.bans).toHaveLength(1);
      expect((await ws.api.get(`/v1/bans?channel=${other.id}`)).body.bans).toEqual([]);
      expect((await ws.api.get('/v1/bans?channel=no-such-channel')).body.bans).toEqual([]);
      expectError(
        await ws.api.post(`/v1/channels/${ch.id}/bans`, { user_external_id: 'nobody' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post('/v1/channels/no-such-channel/bans', { user_external_id: 'bo' }),
        404,
        'NOT_FOUND',
      );
      expect((await ws.api.delete(`/v1/channels/${ch.id}/bans/bo`)).status).toBe(204);
      expect((await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'back' })).status).toBe(201);
    });

    it('a group admin bans through /v1/me/channels/:id/bans; members, direct channels and self-bans are refused', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const byAdmin = await ana.api.post(`/v1/me/channels/${ch.id}/bans`, {
        user_external_id: 'cy',
        duration_seconds: 60,
      });
      expect(byAdmin.status).toBe(200);
      expect(byAdmin.body.banned_by).toEqual({ id: ana.id, external_id: 'ana', name: 'Ana' });
      expectError(await cy.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hi' }), 403, 'BANNED');
      expectError(
        await bo.api.post(`/v1/me/channels/${ch.id}/bans`, { user_external_id: 'ana' }),
        403,
        'FORBIDDEN',
      );
      expectError(await bo.api.delete(`/v1/me/channels/${ch.id}/bans/cy`), 403, 'FORBIDDEN');
      expectError(
        await ana.api.post(`/v1/me/channels/${ch.id}/bans`, { user_external_id: 'ana' }),
        400,
        'VALIDATION_ERROR',
      );
      const dm = (await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] }))
        .body;
      expectError(
        await ana.api.post(`/v1/me/channels/${dm.id}/bans`, { user_external_id: 'bo' }),
        403,
        'FORBIDDEN',
      );
      expect((await ana.api.delete(`/v1/me/channels/${ch.id}/bans/cy`)).status).toBe(204);
      expect((await cy.api.post(`/v1/channels/${ch.id}/messages`, { content: 'thanks' })).status).toBe(201);
    });
  });

  describe('shadow bans', () => {
    it('reach no other member by any path: history, replies, search, unread, last_message, realtime, notifications, push, sync', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      fcm.reset();
      const device = await ana.api.post('/v1/me/devices', { token: 'tok-ana', platform: 'android' });
      expect(device.status).toBe(201);
      const root = await send(cy, ch.id, 'a thread root');
      await until('push of the root', async () => fcm.requests.length > 0);
      await sleep(200);
      fcm.reset();
      const since = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
      const [sa, sb] = await Promise.all([
        connectSocket(t.baseUrl, ana.token),
        connectSocket(t.baseUrl, bo.token),
      ]);
      const readUpTo = await ana.api.post(`/v1/channels/${ch.id}/read`, {});
      expect(readUpTo.status).toBeLessThan(300);
      const before = (await ana.api.get('/v1/me/channels')).body.channels.find(
        (c: { id: string }) => c.id === ch.id,
      );

      await ws.api.post('/v1/users/bo/ban', { shadow: true, reason: 'spam' });
      const sm = await send(bo, ch.id, { content: 'zebracorn deals @ana', mentions: ['ana'] });
      const reply = await send(bo, ch.id, { content: 'zebracorn in a thread', thread_id: root.id });
      expect(
        (await bo.api.patch(`/v1/messages/${sm.id}`, { content: 'zebracorn deals, edited' })).status,
      ).toBe(200);
      expect((await bo.api.post(`/v1/messages/${sm.id}/reactions`, { emoji: '🎉' })).status).toBe(200);
      expect('shadowed' in sm).toBe(false); // the author is not told
      // the author sees everything as usual, live and in history
      await sb.waitFor('message.new', (e) => e.data.id === sm.id);
      await sb.waitFor('message.new', (e) => e.data.id === reply.id);
      await sb.waitFor(
        'message.updated',
        (e) => e.data.id === sm.id && e.data.content === 'zebracorn deals, edited',
      );
      const own = (await history(bo.api, ch.id)).messages;
      expect(own.map((m) => m.id)).toEqual(expect.arrayContaining([sm.id]));
      expect(own.find((m) => m.id === sm.id)).not.toHaveProperty('shadowed');
      expect(
        (await bo.api.get(`/v1/messages/${root.id}/replies`)).body.messages.map((m: { id: string }) => m.id),
      ).toEqual([reply.id]);

      // a control message after them, so "nothing arrived" is judged after something that did
      const control = await send(cy, ch.id, 'zebracorn facts');
      await sa.waitFor('message.new', (e) => e.data.id === control.id);
      await until('push of the control message', async () =>
        fcm.requests.some((r) => (r.body.message.data as { message_id?: string }).message_id === control.id),
      );
      await sleep(300);

      const shadowIds = new Set([sm.id, reply.id]);
      const mentionsShadow = (x: unknown) => [...shadowIds].some((id) => JSON.stringify(x).includes(id));
      // realtime: nothing of bo's on ana's socket (message.new, updates, reactions, thread counters, mentions)
      expect(sa.events.filter((e) => mentionsShadow(e.payload))).toEqual([]);
      expect(sa.events.filter((e) => e.name === 'message.updated' && e.payload.data.id === root.id)).toEqual(
        [],
      );
      expect(fcm.requests.filter((r) => mentionsShadow(r.body))).toEqual([]);
      expect(fcm.requests.map((r) => (r.body.message.data as { message_id?: string }).message_id)).toEqual([
        control.id,
      ]);
      // reads
      expect((await history(ana.api, ch.id)).messages.map((m) => m.id)).toEqual([control.id, root.id]);
      const replies = await ana.api.get(`/v1/messages/${root.id}/replies`);
      expect(replies.body.messages).toEqual([]);
      const rootSeen = (await history(ana.api, ch.id)).messages.find((m) => m.id === root.id) as unknown as {
        reply_count: number;
      };
      expect(rootSeen.reply_count).toBe(0);
      const search = await ana.api.get(`/v1/channels/${ch.id}/messages/search?q=zebracorn`);
      expect(search.body.messages.map((m: { id: string }) => m.id)).toEqual([control.id]);
      const mine = (await ana.api.get('/v1/me/channels')).body.channels.find(
        (c: { id: string }) => c.id === ch.id,
      );
      expect([mine.unread_count, mine.mention_unread_count, mine.last_message?.id]).toEqual([
        1,
        0,
        control.id,
      ]);
      expect(before.unread_count).toBe(0);
      const sync = await ana.api.get(`/v1/me/sync?since=${since}`);
      expect(sync.status).toBe(200);
      expect(sync.body.events.filter((e: unknown) => mentionsShadow(e))).toEqual([]);
      expect(sync.body.events.some((e: unknown) => JSON.stringify(e).includes(control.id))).toBe(true);
      const channelEvents = await ana.api.get(`/v1/channels/${ch.id}/events?after_seq=0`);
      expect(channelEvents.body.events.filter((e: unknown) => mentionsShadow(e))).toEqual([]);

      // the backend sees them, marked
      const seen = (await history(ws.api, ch.id)).messages as unknown as { id: string; shadowed?: boolean }[];
      expect(seen.filter((m) => m.shadowed).map((m) => m.id)).toEqual([sm.id]);
      expect(seen.find((m) => m.id === control.id)).not.toHaveProperty('shadowed');
    });

    it('webhooks get message.created with shadowed: true and nothing else of the message; user.banned and user.unbanned fire', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const url = rx.url(200);
      await createWebhook(ws, url, [
        'message.created',
        'message.updated',
        'message.deleted',
        'message.reaction.added',
        'message.mentioned',
        'user.banned',
        'user.unbanned',
        'poll.voted',
        'poll.closed',
      ]);
      await ws.api.post('/v1/users/bo/ban', { shadow: true, reason: 'spam', duration_seconds: 3600 });
      const sm = await send(bo, ch.id, { content: 'psst @ana', mentions: ['ana'] });
      // a shadowed poll: its votes and its close say nothing to webhooks either
      const sp = (
        await bo.api.post(`/v1/channels/${ch.id}/polls`, { question: 'psst?', options: ['a', 'b'] })
      ).body as { id: string; poll: { options: { id: string }[] } };
      expect(
        (await bo.api.put(`/v1/messages/${sp.id}/poll/vote`, { option_ids: [sp.poll.options[0]!.id] }))
          .status,
      ).toBe(200);
      expect((await bo.api.post(`/v1/messages/${sp.id}/poll/close`)).status).toBe(200);
      await bo.api.patch(`/v1/messages/${sm.id}`, { content: 'psst, edited' });
      await ana.api.post(`/v1/messages/${sm.id}/reactions`, { emoji: '👍' }); // she cannot see it, but may guess its id
      await bo.api.delete(`/v1/messages/${sm.id}`);
      await ws.api.delete('/v1/users/bo/ban');
      const control = await send(ana, ch.id, { content: 'hi @bo', mentions: ['bo'] });
      await rx.waitFor(url, {
        pred: (r) => eventOf(r) === 'message.mentioned' && r.json.data.message_id === control.id,
      });
      await sleep(300);

      const all = rx.received(url);
      const about = (r: ReceivedRequest) => JSON.stringify(r.json.data).includes(sm.id);
      const shadowHooks = all.filter(about);
      expect(shadowHooks.map(eventOf)).toEqual(['message.created']);
      expect(shadowHooks[0]!.json.data.message).toMatchObject({ id: sm.id, shadowed: true });
      expect(all.filter((r) => JSON.stringify(r.json.data).includes(sp.id)).map(eventOf)).toEqual([
        'message.created',
      ]);
      const created = all.find(
        (r) => eventOf(r) === 'message.created' && r.json.data.message.id === control.id,
      )!;
      expect(created.json.data.message).not.toHaveProperty('shadowed');
      const banned = all.find((r) => eventOf(r) === 'user.banned')!;
      expect(banned.json.data).toMatchObject({
        user: { id: bo.id, external_id: 'bo' },
        channel_id: null,
        reason: 'spam',
        shadow: true,
      });
      expect(Date.parse(banned.json.data.expires_at)).toBeGreaterThan(Date.now());
      expect(
        all.filter((r) => eventOf(r) === 'user.unbanned').map((r) => r.json.data.user.external_id),
      ).toEqual(['bo']);
    });

    it('a lifted shadow ban lets new messages through; the shadowed ones stay hidden', async () => {
      const { ws, ch, ana, bo } = await room(t);
      await ws.api.post('/v1/users/bo/ban', { shadow: true });
      const hidden = await send(bo, ch.id, 'while shadowed');
      await ws.api.delete('/v1/users/bo/ban');
      const shown = await send(bo, ch.id, 'after the lift');
      expect((await history(ana.api, ch.id)).messages.map((m) => m.id)).toEqual([shown.id]);
      expect((await history(bo.api, ch.id)).messages.map((m) => m.id)).toEqual([shown.id, hidden.id]);
    });
  });
});
