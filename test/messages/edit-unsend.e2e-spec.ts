import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, messageEvents, room, send, sleep } from './helpers';

describe('edit and unsend (SPEC message lifecycle; CONTRACT §7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  describe('edit: live → live with edited_at', () => {
    it('the author edits: 200 with new content and edited_at; history shows it; one message.updated', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'frist');
      const res = await ana.api.patch(`/v1/messages/${m.id}`, { content: 'first' });
      expect(res.status).toBe(200);
      expect([res.body.id, res.body.content, res.body.created_at]).toEqual([m.id, 'first', m.created_at]);
      expect(Date.parse(res.body.edited_at)).toBeGreaterThanOrEqual(Date.parse(m.created_at));
      const h = (await history(bo.api, ch.id)).messages[0]!;
      expect([h.content, h.edited_at]).toEqual(['first', res.body.edited_at]);
      const events = await messageEvents(t, ch.id);
      expect(events.map((e) => e.type)).toEqual(['message.created', 'message.updated']);
      expect(events[1]!.payload).toEqual({
        message: {
          id: m.id,
          channel_id: ch.id,
          channel_external_id: ch.external_id,
          content: 'first',
          metadata: {},
          previews: [],
          edited_at: res.body.edited_at,
        },
      });
      expect(events[1]!.seq).toBe(events[0]!.seq! + 1);
    });

    it("another member's edit is 403 NOT_AUTHOR; a backend key may edit anything", async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'mine');
      expectError(await bo.api.patch(`/v1/messages/${m.id}`, { content: 'yours' }), 403, 'NOT_AUTHOR');
      const byBackend = await ws.api.patch(`/v1/messages/${m.id}`, { content: 'moderated' });
      expect([byBackend.status, byBackend.body.content]).toEqual([200, 'moderated']);
      const sys = await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'system', system: true });
      expectError(await ana.api.patch(`/v1/messages/${sys.body.id}`, { content: 'x' }), 403, 'NOT_AUTHOR');
      expect((await ws.api.patch(`/v1/messages/${sys.body.id}`, { content: 'system v2' })).status).toBe(200);
    });

    it('edited content is size-checked again and may not be empty', async () => {
      const { ch, ana } = await room(t);
      const m = await send(ana, ch.id, 'short');
      expectError(
        await ana.api.patch(`/v1/messages/${m.id}`, { content: '€'.repeat(2731) }),
        413,
        'MESSAGE_TOO_LARGE',
      );
      expectError(await ana.api.patch(`/v1/messages/${m.id}`, { content: '  ' }), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.patch(`/v1/messages/${m.id}`, {}), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.patch(`/v1/messages/${m.id}`, { content: null }), 400, 'VALIDATION_ERROR');
      expect((await history(ana.api, ch.id)).messages[0]!.content).toBe('short');
      // metadata alone: the content stays
      const meta = await ana.api.patch(`/v1/messages/${m.id}`, { metadata: { k: 1 } });
      expect([meta.status, meta.body.content, meta.body.metadata]).toEqual([200, 'short', { k: 1 }]);
    });

    it('a caption may be emptied on an attachment message', async () => {
      const { ch, ana } = await room(t);
      const m = await send(ana, ch.id, { content: 'caption', attachment_url: `${t.baseUrl}/files/a/b.png` });
      const res = await ana.api.patch(`/v1/messages/${m.id}`, { content: '' });
      expect([res.status, res.body.content, res.body.type]).toEqual([200, '', 'image']);
    });

    it('editing an unsent message is 422 MESSAGE_DELETED', async () => {
      const { ws, ch, ana } = await room(t);
      const m = await send(ana, ch.id, 'gone');
      expect((await ana.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
      expectError(await ana.api.patch(`/v1/messages/${m.id}`, { content: 'back?' }), 422, 'MESSAGE_DELETED');
      expectError(await ws.api.patch(`/v1/messages/${m.id}`, { content: 'back?' }), 422, 'MESSAGE_DELETED');
    });
  });

  describe('unsend: live → deleted → deleted', () => {
    it('answers 200 with the blanked message; history keeps it blanked; one message.deleted', async () => {
      const { ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, {
        content: 'regret @bo',
        mentions: ['bo'],
        attachment_url: `${t.baseUrl}/files/x/y.pdf`,
      });
      const res = await ana.api.delete(`/v1/messages/${m.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: m.id,
        content: '',
        attachment_url: null,
        attachment: null,
        type: 'file',
      });
      expect(res.body).not.toHaveProperty('mentions');
      expect(Date.parse(res.body.deleted_at)).toBeGreaterThanOrEqual(Date.parse(m.created_at));
      const h = (await history(bo.api, ch.id)).messages.find((x) => x.id === m.id)!;
      expect([h.content, h.attachment_url, h.deleted_at]).toEqual(['', null, res.body.deleted_at]);
      const events = await messageEvents(t, ch.id);
      expect(events.map((e) => e.type)).toEqual(['message.created', 'message.mentioned', 'message.deleted']);
      expect(events[2]!.payload).toEqual({
        message: {
          id: m.id,
          channel_id: ch.id,
          channel_external_id: ch.external_id,
          deleted_at: res.body.deleted_at,
        },
      });
    });

    it('a second unsend is 200 with the same deleted_at and fires nothing', async () => {
      const { ch, ana } = await room(t);
      const m = await send(ana, ch.id, 'twice');
      const d1 = await ana.api.delete(`/v1/messages/${m.id}`);
      const d2 = await ana.api.delete(`/v1/messages/${m.id}`);
      expect([d1.status, d2.status]).toEqual([200, 200]);
      expect(d2.body.deleted_at).toBe(d1.body.deleted_at);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual([
        'message.created',
        'message.deleted',
      ]);
    });

    it("another member's unsend is 403 NOT_AUTHOR; a backend key may unsend anything", async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(ana, ch.id, 'mine');
      expectError(await bo.api.delete(`/v1/messages/${m.id}`), 403, 'NOT_AUTHOR');
      const res = await ws.api.delete(`/v1/messages/${m.id}`);
      expect([res.status, res.body.content]).toEqual([200, '']);
    });
  });

  it('a member who left the channel is 403 NOT_A_MEMBER on their old message; unknown ids are 404', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const m = await send(bo, ch.id, 'bye');
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/bo`)).status).toBe(204);
    expectError(await bo.api.patch(`/v1/messages/${m.id}`, { content: 'x' }), 403, 'NOT_A_MEMBER');
    expectError(await bo.api.delete(`/v1/messages/${m.id}`), 403, 'NOT_A_MEMBER');
    for (const id of ['01900000-0000-7000-8000-000000000009', 'not-an-id']) {
      expectError(await ana.api.patch(`/v1/messages/${id}`, { content: 'x' }), 404, 'NOT_FOUND');
      expectError(await ana.api.delete(`/v1/messages/${id}`), 404, 'NOT_FOUND');
    }
  });
});

describe('edit and unsend windows (SERVICE_EDIT_WINDOW_SECONDS, SERVICE_UNSEND_WINDOW_SECONDS)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_EDIT_WINDOW_SECONDS: '1', SERVICE_UNSEND_WINDOW_SECONDS: '1' });
  });
  afterAll(async () => t.close());

  it('within the window both work; after it a user gets 422, a backend key still may', async () => {
    const { ws, ch, ana } = await room(t);
    const early = await send(ana, ch.id, 'early');
    expect((await ana.api.patch(`/v1/messages/${early.id}`, { content: 'edited in time' })).status).toBe(200);
    const a = await send(ana, ch.id, 'a');
    const b = await send(ana, ch.id, 'b');
    const c = await send(ana, ch.id, 'c');
    expect((await ana.api.delete(`/v1/messages/${c.id}`)).status).toBe(200);
    await sleep(1300);
    expectError(
      await ana.api.patch(`/v1/messages/${a.id}`, { content: 'too late' }),
      422,
      'EDIT_WINDOW_EXPIRED',
    );
    expectError(await ana.api.delete(`/v1/messages/${a.id}`), 422, 'UNSEND_WINDOW_EXPIRED');
    // unsending an already unsent message stays an idempotent 200, window or not
    expect((await ana.api.delete(`/v1/messages/${c.id}`)).status).toBe(200);
    expect((await ws.api.patch(`/v1/messages/${a.id}`, { content: 'backend edit' })).status).toBe(200);
    expect((await ws.api.delete(`/v1/messages/${b.id}`)).status).toBe(200);
    const h = await history(ana.api, ch.id);
    expect(h.messages.map((m) => m.content)).toEqual(['', '', 'backend edit', 'edited in time']);
  });
});
