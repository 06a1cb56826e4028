import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';
import { eventsOf, group, history, messageEvents, Msg, Page, room, send, sleep } from './helpers';

const pinPath = (id: string) => `/v1/messages/${id}/pin`;
const person = (u: TestUser, name: string) => ({ id: u.id, external_id: u.external_id, name });

async function pins(client: TestUser['api'], channelId: string, query = ''): Promise<Page> {
  const res = await client.get(`/v1/channels/${channelId}/pins${query}`);
  if (res.status !== 200) throw new Error(`pins answered ${res.status} ${res.text}`);
  return res.body as Page;
}

/** A system message (backend, exempt from the send rate limit): cheap filler for the 50-pin limit. */
async function system(ws: TestWorkspace, channelId: string, content: string): Promise<Msg> {
  const res = await ws.api.post('/v1/messages', { channel_id: channelId, content, system: true });
  if (res.status !== 201) throw new Error(`setup: system send answered ${res.status} ${res.text}`);
  return res.body as Msg;
}

/** CONTRACT §16: pinned messages. */
describe('pinned messages', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  describe('pin and unpin', () => {
    it('a group admin pins: 200 with pinned_at and pinned_by; history shows it; unpin clears both', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(bo, ch.id, 'pin me');
      expect([m.pinned_at, m.pinned_by]).toEqual([null, null]); // a fresh send's answer
      const res = await ana.api.post(pinPath(m.id));
      expect(res.status).toBe(200);
      const pinned = res.body as Msg;
      expect(pinned).toMatchObject({ id: m.id, content: 'pin me', pinned_by: person(ana, 'Ana') });
      expect(pinned.pinned_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const seen = (await history(bo.api, ch.id)).messages.find((x) => x.id === m.id)!;
      expect([seen.pinned_at, seen.pinned_by]).toEqual([pinned.pinned_at, person(ana, 'Ana')]);
      const unpinned = await ana.api.delete(pinPath(m.id));
      expect(unpinned.status).toBe(200);
      expect(unpinned.body).toMatchObject({ id: m.id, pinned_at: null, pinned_by: null });
      const after = (await history(bo.api, ch.id)).messages.find((x) => x.id === m.id)!;
      expect([after.pinned_at, after.pinned_by]).toEqual([null, null]);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual([
        'message.created',
        'message.pinned',
        'message.unpinned',
      ]);
    });

    it('the backend key pins and unpins anything (pinned_by null); either member of a direct channel may', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(bo, ch.id, 'backend pin');
      const p = await ws.api.post(pinPath(m.id));
      expect(p.status).toBe(200);
      expect(typeof p.body.pinned_at).toBe('string');
      expect(p.body.pinned_by).toBeNull();
      expect((await ws.api.delete(pinPath(m.id))).body.pinned_at).toBeNull();

      const dm = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] });
      expect(dm.status).toBe(201);
      const d = await send(ana, dm.body.id, 'direct');
      const byBo = await bo.api.post(pinPath(d.id));
      expect([byBo.status, byBo.body.pinned_by]).toEqual([200, person(bo, 'Bo')]);
      const byAna = await ana.api.delete(pinPath(d.id));
      expect([byAna.status, byAna.body.pinned_at, byAna.body.pinned_by]).toEqual([200, null, null]);
      expect((await ana.api.post(pinPath(d.id))).status).toBe(200);
      expect((await pins(bo.api, dm.body.id)).messages.map((x) => x.id)).toEqual([d.id]);
    });

    it('a plain group member is 403 FORBIDDEN, an outsider 403 NOT_A_MEMBER; nothing changes', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const dan = await ws.user('dan', 'Dan');
      const m = await send(ana, ch.id, 'admins decide');
      expectError(await bo.api.post(pinPath(m.id)), 403, 'FORBIDDEN');
      expectError(await dan.api.post(pinPath(m.id)), 403, 'NOT_A_MEMBER');
      expect((await pins(ana.api, ch.id)).messages).toEqual([]);
      expect((await ana.api.post(pinPath(m.id))).status).toBe(200);
      expectError(await bo.api.delete(pinPath(m.id)), 403, 'FORBIDDEN');
      expectError(await dan.api.delete(pinPath(m.id)), 403, 'NOT_A_MEMBER');
      expect((await pins(ana.api, ch.id)).messages.map((x) => x.id)).toEqual([m.id]);
      // a member promoted to admin may
      expect((await ws.api.patch(`/v1/channels/${ch.id}/members/bo`, { role: 'admin' })).status).toBe(200);
      expect((await bo.api.delete(pinPath(m.id))).status).toBe(200);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual([
        'message.created',
        'message.pinned',
        'message.unpinned',
      ]);
    });

    it('unknown, malformed and other-workspace messages are 404; so is another workspace’s channel list', async () => {
      const { ch, ana } = await room(t);
      const other = await room(t);
      const theirs = await send(other.ana, other.ch.id, 'elsewhere');
      for (const id of ['01900000-0000-7000-8000-000000000003', 'nope', theirs.id]) {
        expectError(await ana.api.post(pinPath(id)), 404, 'NOT_FOUND');
        expectError(await ana.api.delete(pinPath(id)), 404, 'NOT_FOUND');
      }
      expectError(await other.ws.api.get(`/v1/channels/${ch.id}/pins`), 404, 'NOT_FOUND');
      expectError(await ana.api.get(`/v1/channels/${other.ch.id}/pins`), 404, 'NOT_FOUND');
      expect((await pins(other.ana.api, other.ch.id)).messages).toEqual([]);
    });

    it('pinning a pinned message and unpinning an unpinned one are 200 no-ops without events', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(bo, ch.id, 'twice');
      const noop = await ana.api.delete(pinPath(m.id));
      expect([noop.status, noop.body.pinned_at]).toEqual([200, null]);
      const first = await ana.api.post(pinPath(m.id));
      await sleep(3);
      const second = await ana.api.post(pinPath(m.id));
      expect(second.status).toBe(200);
      expect([second.body.pinned_at, second.body.pinned_by]).toEqual([
        first.body.pinned_at,
        first.body.pinned_by,
      ]);
      expect((await ana.api.delete(pinPath(m.id))).status).toBe(200);
      const again = await ana.api.delete(pinPath(m.id));
      expect([again.status, again.body.pinned_at]).toEqual([200, null]);
      const events = await messageEvents(t, ch.id);
      expect(events.map((e) => e.type)).toEqual(['message.created', 'message.pinned', 'message.unpinned']);
      expect(events[2]!.seq).toBe(events[1]!.seq! + 1);
    });
  });

  describe('the 50-pin limit', () => {
    it('the 51st pin of a channel is 409 PIN_LIMIT; a pinned one still no-ops; other channels and freed slots pin', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const msgs: Msg[] = [];
      for (let i = 0; i < 51; i++) msgs.push(await system(ws, ch.id, `candidate ${i}`));
      for (const m of msgs.slice(0, 50)) expect((await ws.api.post(pinPath(m.id))).status).toBe(200);
      expectError(await ws.api.post(pinPath(msgs[50]!.id)), 409, 'PIN_LIMIT');
      expectError(await ana.api.post(pinPath(msgs[50]!.id)), 409, 'PIN_LIMIT');
      // at the limit, re-pinning a pinned message is still the no-op, not a refusal
      expect((await ana.api.post(pinPath(msgs[7]!.id))).status).toBe(200);
      expect((await pins(ws.api, ch.id, '?limit=100')).messages).toHaveLength(50);
      const refused = (await history(ws.api, ch.id, { limit: 100 })).messages.find(
        (x) => x.id === msgs[50]!.id,
      )!;
      expect(refused.pinned_at).toBeNull();

      const other = await group(ws, 'ana', ['bo']);
      const o = await send(bo, other.id, 'another channel');
      expect((await ana.api.post(pinPath(o.id))).status).toBe(200);

      expect((await ws.api.delete(pinPath(msgs[0]!.id))).status).toBe(200);
      expect((await ana.api.post(pinPath(msgs[50]!.id))).status).toBe(200);
      expectError(await ana.api.post(pinPath(msgs[0]!.id)), 409, 'PIN_LIMIT');
      // unsending a pinned message frees its slot too
      expect((await ws.api.delete(`/v1/messages/${msgs[1]!.id}`)).status).toBe(200);
      expect((await ana.api.post(pinPath(msgs[0]!.id))).status).toBe(200);
      const events = (await messageEvents(t, ch.id)).filter((e) => e.type === 'message.pinned');
      expect(events).toHaveLength(52);
    });
  });

  describe('GET /v1/channels/:id/pins', () => {
    it('lists the most recently pinned first and pages with limit and before', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const byName: Record<string, Msg> = {};
      for (const name of ['m1', 'm2', 'm3', 'm4', 'm5']) byName[name] = await send(ana, ch.id, name);
      for (const name of ['m2', 'm4', 'm1', 'm5', 'm3']) {
        expect((await ana.api.post(pinPath(byName[name]!.id))).status).toBe(200);
        await sleep(2);
      }
      const all = await pins(bo.api, ch.id);
      expect(all.messages.map((x) => x.content)).toEqual(['m3', 'm5', 'm1', 'm4', 'm2']);
      expect([all.has_more, all.next_cursor]).toEqual([false, null]);
      for (const m of all.messages) expect(m.pinned_by).toEqual(person(ana, 'Ana'));
      const times = all.messages.map((x) => Date.parse(x.pinned_at!));
      expect([...times].sort((a, b) => b - a)).toEqual(times);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Page = await pins(ws.api, ch.id, `?limit=2${cursor ? `&before=${cursor}` : ''}`);
        seen.push(...page.messages.map((x) => x.content));
        expect(page.has_more).toBe(page.next_cursor !== null);
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      expect([seen, pages]).toEqual([['m3', 'm5', 'm1', 'm4', 'm2'], 3]);

      // unpin and re-pin moves a message to the front
      expect((await ana.api.delete(pinPath(byName.m1!.id))).status).toBe(200);
      expect((await ana.api.delete(pinPath(byName.m2!.id))).status).toBe(200);
      await sleep(2);
      expect((await ana.api.post(pinPath(byName.m2!.id))).status).toBe(200);
      expect((await pins(bo.api, ch.id)).messages.map((x) => x.content)).toEqual(['m2', 'm3', 'm5', 'm4']);
    });

    it('members and the backend key only; bad queries are 400', async () => {
      const { ws, ch, ana } = await room(t);
      const dan = await ws.user('dan', 'Dan');
      expectError(await dan.api.get(`/v1/channels/${ch.id}/pins`), 403, 'NOT_A_MEMBER');
      expectError(await ana.api.get(`/v1/channels/nope/pins`), 404, 'NOT_FOUND');
      expect((await pins(ws.api, ch.external_id)).messages).toEqual([]); // :id takes the external id too
      for (const q of [
        '?limit=0',
        '?limit=101',
        '?limit=x',
        '?before=garbage',
        `?before=${Buffer.from('["x","y"]').toString('base64url')}`,
        '?after=1',
      ]) {
        expectError(await ana.api.get(`/v1/channels/${ch.id}/pins${q}`), 400, 'VALIDATION_ERROR');
      }
    });

    it('leaves out the messages of users the caller blocks, as history does', async () => {
      const { ch, ana, bo, cy } = await room(t);
      const fromBo = await send(bo, ch.id, 'from bo');
      const fromCy = await send(cy, ch.id, 'from cy');
      await ana.api.post(pinPath(fromBo.id));
      await ana.api.post(pinPath(fromCy.id));
      expect((await cy.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
      expect((await pins(cy.api, ch.id)).messages.map((x) => x.id)).toEqual([fromCy.id]);
      expect((await pins(ana.api, ch.id)).messages.map((x) => x.id)).toEqual([fromCy.id, fromBo.id]);
    });
  });

  describe('unsend', () => {
    it('unsending a pinned message unpins it: message.deleted then message.unpinned; it cannot be pinned again (422)', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(bo, ch.id, 'pinned, then unsent');
      expect((await ana.api.post(pinPath(m.id))).status).toBe(200);
      const unsent = await bo.api.delete(`/v1/messages/${m.id}`);
      expect(unsent.status).toBe(200);
      expect(unsent.body).toMatchObject({ content: '', pinned_at: null, pinned_by: null });
      expect((await pins(ana.api, ch.id)).messages).toEqual([]);
      const h = (await history(ana.api, ch.id)).messages.find((x) => x.id === m.id)!;
      expect([h.content, h.pinned_at, h.pinned_by]).toEqual(['', null, null]);
      const events = await messageEvents(t, ch.id);
      expect(events.map((e) => e.type)).toEqual([
        'message.created',
        'message.pinned',
        'message.deleted',
        'message.unpinned',
      ]);
      expect(events[3]!.seq).toBe(events[2]!.seq! + 1);
      expect(events[3]!.payload).toMatchObject({
        message: { id: m.id, content: '', pinned_at: null, deleted_at: unsent.body.deleted_at },
      });

      expectError(await ana.api.post(pinPath(m.id)), 422, 'MESSAGE_DELETED');
      expectError(await ws.api.post(pinPath(m.id)), 422, 'MESSAGE_DELETED');
      // the refusal of a plain member is about the role, whatever the message
      expectError(await bo.api.post(pinPath(m.id)), 403, 'FORBIDDEN');
      const noop = await ana.api.delete(pinPath(m.id));
      expect([noop.status, noop.body.pinned_at]).toEqual([200, null]);
      // a second unsend fires nothing more
      expect((await bo.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
      expect(await messageEvents(t, ch.id)).toHaveLength(4);
    });

    it('a thread reply pins like any message; its unsend unpins it before the root’s counters change', async () => {
      const { ch, ana, bo } = await room(t);
      const root = await send(ana, ch.id, 'root');
      const reply = await send(bo, ch.id, { content: 'in the thread', thread_id: root.id });
      const p = await ana.api.post(pinPath(reply.id));
      expect(p.body).toMatchObject({ id: reply.id, thread_id: root.id, pinned_by: person(ana, 'Ana') });
      expect(
        (await pins(bo.api, ch.id)).messages.map((x) => [x.id, (x as { thread_id?: string }).thread_id]),
      ).toEqual([[reply.id, root.id]]);
      expect((await bo.api.delete(`/v1/messages/${reply.id}`)).status).toBe(200);
      expect((await pins(bo.api, ch.id)).messages).toEqual([]);
      expect((await eventsOf(t, ch.id)).map((e) => e.type).slice(-3)).toEqual([
        'message.deleted',
        'message.unpinned',
        'thread.updated',
      ]);
    });

    it('unsending a message that is not pinned fires no message.unpinned', async () => {
      const { ch, ana } = await room(t);
      const m = await send(ana, ch.id, 'plain');
      expect((await ana.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual([
        'message.created',
        'message.deleted',
      ]);
    });
  });

  describe('events', () => {
    it('realtime message.pinned / message.unpinned {message} with the channel seq; none for no-ops or to blockers', async () => {
      const { ch, ana, bo, cy } = await room(t);
      expect((await cy.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
      const [sa, sb, sc] = await Promise.all([
        connectSocket(t.baseUrl, ana.token),
        connectSocket(t.baseUrl, bo.token),
        connectSocket(t.baseUrl, cy.token),
      ]);
      const m = await send(ana, ch.id, 'news');
      const fresh = await sb.waitFor('message.new', (e) => e?.data?.id === m.id);
      expect([fresh.data.pinned_at, fresh.data.pinned_by]).toEqual([null, null]);
      const p = (await ana.api.post(pinPath(m.id))).body as Msg;
      const isPin = (e: any) => e?.data?.message?.id === m.id;
      const env = await sb.waitFor('message.pinned', isPin);
      expect(env).toMatchObject({
        v: 1,
        type: 'message.pinned',
        channel_id: ch.id,
        data: {
          message: { id: m.id, content: 'news', pinned_at: p.pinned_at, pinned_by: person(ana, 'Ana') },
        },
      });
      expect(env.seq).toBe(fresh.seq + 1);
      await sa.waitFor('message.pinned', isPin);
      await sc.waitFor('message.pinned', isPin); // cy blocks bo, not ana

      expect((await ana.api.post(pinPath(m.id))).status).toBe(200); // no-op
      expect((await ana.api.delete(pinPath(m.id))).status).toBe(200);
      const envU = await sb.waitFor('message.unpinned', isPin);
      expect(envU).toMatchObject({ type: 'message.unpinned', channel_id: ch.id, seq: env.seq + 1 });
      expect([envU.data.message.pinned_at, envU.data.message.pinned_by]).toEqual([null, null]);

      // bo's message pinned: cy (who blocks bo) hears nothing
      const fromBo = await send(bo, ch.id, 'from bo');
      expect((await ana.api.post(pinPath(fromBo.id))).status).toBe(200);
      await sa.waitFor('message.pinned', (e) => e?.data?.message?.id === fromBo.id);
      const control = await send(ana, ch.id, 'control'); // committed after the pin; cy hears ana
      await sc.expectNoneBefore('message.pinned', (e) => e?.data?.message?.id === fromBo.id, [
        'message.new',
        (e) => e?.data?.id === control.id,
      ]);
      // the no-op pin published nothing (it would have come before the unpin)
      expect(sb.events.filter((e) => e.name === 'message.pinned' && isPin(e.payload))).toHaveLength(1);
    });

    it('the events appear in /v1/channels/:id/events and /v1/me/sync with the pin state they announced', async () => {
      const { ch, ana, bo } = await room(t);
      const since = (await bo.api.get('/v1/me/sync')).body.next_cursor as string;
      const m = await send(ana, ch.id, 'catch up');
      await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
      const p = (await ana.api.post(pinPath(m.id))).body as Msg;
      expect((await ana.api.delete(pinPath(m.id))).status).toBe(200);
      const sync = await bo.api.get(`/v1/me/sync?since=${since}`);
      expect(sync.status).toBe(200);
      const pinEvents = (sync.body.events as { type: string; seq: number; data: any }[]).filter((e) =>
        e.type.endsWith('pinned'),
      );
      expect(pinEvents.map((e) => [e.type, e.data.message.id, e.data.message.pinned_at])).toEqual([
        ['message.pinned', m.id, p.pinned_at],
        ['message.unpinned', m.id, null],
      ]);
      // rendered for the reader: bo reacted
      expect(pinEvents[0]!.data.message.reactions).toEqual([{ emoji: '👍', count: 1, reacted_by_me: true }]);
      expect(pinEvents[0]!.data.message.pinned_by).toEqual(person(ana, 'Ana'));
      const after = pinEvents[0]!.seq - 1;
      const chEvents = await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=${after}`);
      expect(chEvents.body.events.map((e: { type: string; seq: number }) => [e.type, e.seq])).toEqual([
        ['message.pinned', after + 1],
        ['message.unpinned', after + 2],
      ]);
      // after an unsend, a catch-up shows the message blanked, never what it said
      expect((await ana.api.post(pinPath(m.id))).status).toBe(200);
      expect((await ana.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
      const late = await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=${after}`);
      const contents = late.body.events
        .filter((e: { type: string }) => e.type.endsWith('pinned'))
        .map((e: { type: string; data: any }) => [
          e.type,
          e.data.message.content,
          e.data.message.pinned_at === null,
        ]);
      expect(contents).toEqual([
        ['message.pinned', '', false],
        ['message.unpinned', '', true],
        ['message.pinned', '', false],
        ['message.unpinned', '', true],
      ]);
    });

    describe('webhooks', () => {
      let rx: Receiver;
      beforeAll(async () => {
        rx = await Receiver.start();
      });
      afterAll(async () => rx.close());

      it('message.pinned / message.unpinned are webhook events of their own with {message}', async () => {
        const ws = await newWorkspace(t);
        const [ana, bo] = await Promise.all([ws.user('ana', 'Ana'), ws.user('bo', 'Bo')]);
        const ch = await group(ws, 'ana', ['bo']);
        const url = rx.url(200);
        const wh = await createWebhook(ws, url, ['message.pinned']);
        const patched = await ws.api.patch(`/v1/webhooks/${wh.id}`, {
          events: ['message.pinned', 'message.unpinned'],
        });
        expect([patched.status, patched.body.events]).toEqual([200, ['message.pinned', 'message.unpinned']]);
        expectError(
          await ws.api.post('/v1/webhooks', { url, events: ['message.pin'] }),
          400,
          'VALIDATION_ERROR',
        );

        const m = await send(bo, ch.id, 'hook me');
        await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '🎉' });
        const p = (await ana.api.post(pinPath(m.id))).body as Msg;
        expect((await ana.api.post(pinPath(m.id))).status).toBe(200); // no-op: no second delivery
        expect((await ana.api.delete(pinPath(m.id))).status).toBe(200);
        const got = await rx.waitFor(url, { count: 2 });
        const of = (name: string) => got.find((r) => eventOf(r) === name)!;
        expect(got.map((r) => eventOf(r)).sort()).toEqual(['message.pinned', 'message.unpinned']);
        expect(of('message.pinned').json).toMatchObject({ event: 'message.pinned', workspace_id: ws.id });
        expect(of('message.pinned').json.data.message).toMatchObject({
          id: m.id,
          channel_id: ch.id,
          content: 'hook me',
          user: { external_id: 'bo' },
          pinned_at: p.pinned_at,
          pinned_by: person(ana, 'Ana'),
          reactions: [{ emoji: '🎉', count: 1, reacted_by_me: false }],
        });
        expect(of('message.unpinned').json.data.message).toMatchObject({
          id: m.id,
          pinned_at: null,
          pinned_by: null,
        });
        // the unsend's unpin is delivered too
        await ana.api.post(pinPath(m.id));
        await bo.api.delete(`/v1/messages/${m.id}`);
        const all = await rx.waitFor(url, { count: 4 });
        expect(all.map((r) => eventOf(r)).sort()).toEqual([
          'message.pinned',
          'message.pinned',
          'message.unpinned',
          'message.unpinned',
        ]);
        const last = all.filter((r) => eventOf(r) === 'message.unpinned').map((r) => r.json.data.message);
        expect(last).toContainEqual(expect.objectContaining({ id: m.id, content: '', pinned_at: null }));
        await sleep(300);
        expect(rx.received(url)).toHaveLength(4);
      });
    });
  });

  it('the OpenAPI document has the routes, the message fields and PIN_LIMIT', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; enum?: string[] }> };
    };
    expect(Object.keys(doc.paths['/v1/messages/{id}/pin'] ?? {}).sort()).toEqual(['delete', 'post']);
    expect(Object.keys(doc.paths['/v1/channels/{id}/pins'] ?? {})).toEqual(['get']);
    expect(Object.keys(doc.paths['/v1/messages/{id}/pin']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '403', '404', '409', '422']),
    );
    expect(Object.keys(doc.components.schemas.Message!.properties!)).toEqual(
      expect.arrayContaining(['pinned_at', 'pinned_by']),
    );
    expect(doc.components.schemas.ErrorCode!.enum).toEqual(
      expect.arrayContaining(['PIN_LIMIT', 'MESSAGE_DELETED']),
    );
  });
});
