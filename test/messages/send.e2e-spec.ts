import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, messageEvents, Msg, room, send } from './helpers';

describe('send (SPEC message lifecycle: none → live; CONTRACT §7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('a member sends: 201 with the contract fields, no reply or mention fields, one message.created event', async () => {
    const { ch, ana, bo } = await room(t);
    const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello world' });
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const m = res.body as Msg;
    expect(m).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/),
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      user_id: ana.id,
      user: { id: ana.id, external_id: 'ana', name: 'Ana', avatar_url: null },
      content: 'hello world',
      type: 'text',
      attachment_url: null,
      attachment: null,
      metadata: {},
      // any message may start a thread (CONTRACT §15)
      reply_count: 0,
      last_reply_at: null,
      thread_participants: [],
      // the author's own read state of its thread (CONTRACT §23)
      thread: { participant: true, unread_replies: 0, last_read_at: m.created_at },
      reactions: [],
      // link previews come later, when there are links (CONTRACT §26)
      previews: [],
      pinned_at: null,
      pinned_by: null,
      receipt_status: 'sent',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      edited_at: null,
      deleted_at: null,
    });
    const h = await history(bo.api, ch.id);
    expect(h.messages.map((x) => [x.id, x.content])).toEqual([[m.id, 'hello world']]);
    const events = await messageEvents(t, ch.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('message.created');
    expect(events[0]!.payload).toEqual({
      message: {
        id: m.id,
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        user: { id: ana.id, external_id: 'ana', name: 'Ana' },
        content: 'hello world',
        type: 'text',
        attachment_url: null,
        created_at: m.created_at,
        metadata: {},
        previews: [],
      },
    });
  });

  it('the send answer (built without reading back) is exactly the message as the next read shows it', async () => {
    const { ws, ch, ana, bo } = await room(t);
    await ws.api.put('/v1/users/bo', { avatar_url: 'https://cdn.example.com/bo.png' });
    const parent = await send(ana, ch.id, 'the parent');
    const gone = await send(ana, ch.id, 'soon unsent');
    expect((await ana.api.delete(`/v1/messages/${gone.id}`)).status).toBe(200);
    const answers: Msg[] = [
      await send(bo, ch.id, 'plain'),
      await send(bo, ch.id, {
        content: 'reply with all of it',
        parent_id: parent.id,
        mentions: ['cy', 'ana'],
        attachment_url: `${t.baseUrl}/files/ws/abc/cat.png`,
        idempotency_key: 'k-1',
      }),
      await send(bo, ch.id, { content: 'to an unsent parent', parent_id: gone.id }),
      (
        await ws.api.post(`/v1/channels/${ch.external_id}/messages`, {
          content: 'as bo',
          user_external_id: 'bo',
        })
      ).body,
      (await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'system says', system: true })).body,
    ];
    expect(answers[1]!.quoted_message).toMatchObject({
      id: parent.id,
      content: 'the parent',
      deleted: false,
    });
    expect(answers[2]!.quoted_message).toMatchObject({ id: gone.id, content: '', deleted: true });
    expect(answers[3]!.user).toEqual({
      id: bo.id,
      external_id: 'bo',
      name: 'Bo',
      avatar_url: 'https://cdn.example.com/bo.png',
    });
    const byId = new Map((await history(bo.api, ch.id)).messages.map((m) => [m.id, m]));
    // bo's own answers are his history's objects; the backend key's carry no user's thread read state
    for (const a of answers.slice(0, 3)) expect(a).toEqual(byId.get(a.id));
    for (const a of answers.slice(3)) {
      const { thread, ...shown } = byId.get(a.id)!;
      const mine = a.user?.id === bo.id;
      expect([a, thread]).toEqual([
        shown,
        { participant: mine, unread_replies: 0, last_read_at: mine ? a.created_at : null },
      ]);
    }
    // the replay (read back) answers the same object
    const replay = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
      content: 'ignored',
      idempotency_key: 'k-1',
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(answers[1]);
  });

  it('a backend sends for a user with user_external_id, by channel id or external_id', async () => {
    const { ws, ch, bo } = await room(t);
    const a = await ws.api.post(`/v1/channels/${ch.id}/messages`, {
      content: 'from the backend',
      user_external_id: 'bo',
    });
    expect(a.status).toBe(201);
    expect(a.body.user_id).toBe(bo.id);
    const b = await ws.api.post(`/v1/channels/${ch.external_id}/messages`, {
      content: 'by external id',
      user_external_id: 'bo',
    });
    expect(b.status).toBe(201);
    expect(b.body.channel_id).toBe(ch.id);
    const c = await ws.api.post('/v1/messages', {
      channel_id: ch.external_id,
      content: 'backend form',
      user_external_id: 'bo',
    });
    expect(c.status).toBe(201);
    expect([c.body.channel_id, c.body.user_id, c.body.type]).toEqual([ch.id, bo.id, 'text']);
  });

  it('a backend send needs user_external_id, of a known user who is a member', async () => {
    const { ws, ch } = await room(t);
    await ws.user('dan');
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'who?' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'who?' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', user_external_id: 'ghost' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', user_external_id: 'dan' }),
      403,
      'NOT_A_MEMBER',
    );
    expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
  });

  it('a user token may not send as someone else, and may not use the backend form', async () => {
    const { ch, ana } = await room(t);
    expectError(
      await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', user_external_id: 'bo' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', user_external_id: 'ana' }))
        .status,
    ).toBe(201);
    expectError(await ana.api.post('/v1/messages', { channel_id: ch.id, content: 'x' }), 403, 'FORBIDDEN');
  });

  it('system: true creates a system message with no user, by channel id or external_id', async () => {
    const { ws, ch, bo } = await room(t);
    const res = await ws.api.post('/v1/messages', {
      channel_id: ch.id,
      content: 'Welcome everyone',
      system: true,
    });
    expect(res.status).toBe(201);
    expect([res.body.type, res.body.user, res.body.user_id, res.body.content]).toEqual([
      'system',
      null,
      null,
      'Welcome everyone',
    ]);
    const two = await ws.api.post('/v1/messages', {
      channel_id: ch.external_id,
      content: 'again',
      system: true,
    });
    expect(two.status).toBe(201);
    expect((await history(bo.api, ch.id)).messages.map((x) => x.type)).toEqual(['system', 'system']);
    const events = await messageEvents(t, ch.id);
    expect(events.map((e) => (e.payload.message as { user: unknown }).user)).toEqual([null, null]);
    expectError(
      await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'x',
        system: true,
        user_external_id: 'bo',
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', system: true }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('unknown channels are 404 for both forms', async () => {
    const { ws, ana } = await room(t);
    expectError(await ana.api.post('/v1/channels/nope/messages', { content: 'x' }), 404, 'NOT_FOUND');
    expectError(
      await ws.api.post('/v1/messages', {
        channel_id: '01900000-0000-7000-8000-000000000001',
        content: 'x',
        system: true,
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('a non-member send is 403 NOT_A_MEMBER and stores nothing', async () => {
    const { ws, ch } = await room(t);
    const dan = await ws.user('dan');
    const res = await dan.api.post(`/v1/channels/${ch.id}/messages`, { content: 'let me in' });
    expectError(res, 403, 'NOT_A_MEMBER');
    expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
  });

  it('empty or whitespace-only content without an attachment is 400; surrounding spaces are kept', async () => {
    const { ws, ch, ana } = await room(t);
    for (const body of [{ content: '' }, { content: ' \n\t ' }, {}]) {
      expectError(await ana.api.post(`/v1/channels/${ch.id}/messages`, body), 400, 'VALIDATION_ERROR');
    }
    expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
    expect((await send(ana, ch.id, ' x ')).content).toBe(' x ');
  });

  it('malformed bodies are 400: wrong types, unknown fields, > 50 mentions, idempotency_key over 128', async () => {
    const { ch, ana } = await room(t);
    const bad = [
      { content: 42 },
      { content: 'x', color: 'red' },
      { content: 'x', mentions: 'bo' },
      { content: 'x', mentions: Array.from({ length: 51 }, (_, i) => `u${i}`) },
      { content: 'x', idempotency_key: 'k'.repeat(129) },
      { content: 'x', idempotency_key: '' },
    ];
    for (const body of bad)
      expectError(await ana.api.post(`/v1/channels/${ch.id}/messages`, body), 400, 'VALIDATION_ERROR');
    expect(
      (
        await ana.api.post(`/v1/channels/${ch.id}/messages`, {
          content: 'k',
          idempotency_key: 'k'.repeat(128),
        })
      ).status,
    ).toBe(201);
  });

  describe('idempotency', () => {
    it('a replay answers 200 with the original, Idempotent-Replayed: true, no second row and no event', async () => {
      const { ws, ch, ana } = await room(t);
      const r1 = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'exactly once',
        idempotency_key: 'k-1',
      });
      expect(r1.status).toBe(201);
      const r2 = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'other text',
        idempotency_key: 'k-1',
      });
      expect(r2.status).toBe(200);
      expect(r2.headers['idempotent-replayed']).toBe('true');
      expect([r2.body.id, r2.body.content]).toEqual([r1.body.id, 'exactly once']);
      expect((await history(ws.api, ch.id)).messages).toHaveLength(1);
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual(['message.created']);
    });

    it('keys are per sender: the same key from another user is a new message', async () => {
      const { ch, ana, bo } = await room(t);
      const a = await send(ana, ch.id, { content: 'a', idempotency_key: 'shared' });
      const b = await send(bo, ch.id, { content: 'b', idempotency_key: 'shared' });
      expect(b.id).not.toBe(a.id);
    });

    it('a replay wins over later checks: it answers even when the sender is now muted or over the size', async () => {
      const { ws, ch, bo } = await room(t);
      const first = await send(bo, ch.id, { content: 'once', idempotency_key: 'k-2' });
      expect((await ws.api.post('/v1/users/bo/mute', {})).status).toBe(200);
      const replay = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'x'.repeat(9000),
        idempotency_key: 'k-2',
      });
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(first.id);
    });

    it('a backend replay for a user and a system replay work the same way', async () => {
      const { ws, ch } = await room(t);
      const a = await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'x',
        user_external_id: 'bo',
        idempotency_key: 'k',
      });
      const b = await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'x',
        user_external_id: 'bo',
        idempotency_key: 'k',
      });
      expect([a.status, b.status, b.body.id]).toEqual([201, 200, a.body.id]);
      const s1 = await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'sys',
        system: true,
        idempotency_key: 'k',
      });
      const s2 = await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'sys',
        system: true,
        idempotency_key: 'k',
      });
      expect([s1.status, s2.status, s2.body.id]).toEqual([201, 200, s1.body.id]);
      expect(s1.body.id).not.toBe(a.body.id);
    });
  });

  describe('size (413 MESSAGE_TOO_LARGE, UTF-8 bytes)', () => {
    it('counts bytes, not characters', async () => {
      const { ws, ch, ana } = await room(t);
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: '€'.repeat(2731) }),
        413,
        'MESSAGE_TOO_LARGE',
      );
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'a'.repeat(8193) }),
        413,
        'MESSAGE_TOO_LARGE',
      );
      const exact = 'é'.repeat(4096);
      expect((await send(ana, ch.id, exact)).content).toBe(exact);
      expect((await history(ws.api, ch.id)).messages).toHaveLength(1);
    });
  });

  describe('check order: membership → replay → mute → size → rate → validation', () => {
    it('runs the checks in the contract order', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const dan = await ws.user('dan');
      for (const u of ['dan', 'bo']) expect((await ws.api.post(`/v1/users/${u}/mute`, {})).status).toBe(200);
      expectError(
        await dan.api.post(`/v1/channels/${ch.id}/messages`, { content: 'a'.repeat(9000) }),
        403,
        'NOT_A_MEMBER',
      );
      expectError(
        await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'a'.repeat(9000) }),
        403,
        'MUTED',
      );
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, {
          content: 'a'.repeat(9000),
          parent_id: '01900000-0000-7000-8000-000000000002',
        }),
        413,
        'MESSAGE_TOO_LARGE',
      );
    });
  });

  describe('replies', () => {
    it('carries parent_id and quoted_message; the quote is the first 180 code points, not bytes or UTF-16 units', async () => {
      const { ch, ana, bo } = await room(t);
      const long = '😀é'.repeat(150); // 300 code points, 450 UTF-16 units
      const parent = await send(ana, ch.id, long);
      const reply = await send(bo, ch.id, { content: 'agreed', parent_id: parent.id });
      expect(reply.parent_id).toBe(parent.id);
      expect(reply.quoted_message).toEqual({
        id: parent.id,
        user_id: ana.id,
        user_name: 'Ana',
        content: '😀é'.repeat(90),
        type: 'text',
        deleted: false,
      });
      expect([...reply.quoted_message!.content]).toHaveLength(180);
      const h = (await history(ana.api, ch.id)).messages.find((x) => x.id === reply.id)!;
      expect([h.parent_id, h.quoted_message?.id]).toEqual([parent.id, parent.id]);
      const created = (await messageEvents(t, ch.id)).filter((e) => e.type === 'message.created');
      expect(created[1]!.payload.message).toMatchObject({
        parent_id: parent.id,
        quoted_message: reply.quoted_message,
      });
      expect(created[0]!.payload.message).not.toHaveProperty('parent_id');
      expect(created[0]!.payload.message).not.toHaveProperty('quoted_message');
    });

    it('the quote is re-resolved on every read: an edited parent shows the new text, an unsent one deleted: true', async () => {
      const { ch, ana, bo } = await room(t);
      const parent = await send(ana, ch.id, 'first version');
      const reply = await send(bo, ch.id, { content: 'replying', parent_id: parent.id });
      expect((await ana.api.patch(`/v1/messages/${parent.id}`, { content: 'second version' })).status).toBe(
        200,
      );
      let q = (await history(bo.api, ch.id)).messages.find((x) => x.id === reply.id)!.quoted_message!;
      expect([q.content, q.deleted]).toEqual(['second version', false]);
      expect((await ana.api.delete(`/v1/messages/${parent.id}`)).status).toBe(200);
      q = (await history(bo.api, ch.id)).messages.find((x) => x.id === reply.id)!.quoted_message!;
      expect([q.content, q.deleted]).toEqual(['', true]);
    });

    it('an unknown parent, a malformed one or one in another channel is 400 naming parent_id', async () => {
      const { ws, ch, ana } = await room(t);
      const other = await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'other',
        created_by: 'ana',
      });
      const elsewhere = await send(ana, other.body.id, 'elsewhere');
      for (const parent_id of ['01900000-0000-7000-8000-000000000002', 'not-a-uuid', elsewhere.id]) {
        const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', parent_id });
        expectError(res, 400, 'VALIDATION_ERROR');
        expect(res.body.error.details).toEqual([{ field: 'parent_id', message: expect.any(String) }]);
      }
      expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
    });
  });

  describe('mentions', () => {
    it('mentions members in the given order, once each; one message.mentioned event', async () => {
      const { ch, ana, bo, cy } = await room(t);
      const m = await send(ana, ch.id, { content: 'hey you two', mentions: ['cy', 'bo', 'cy'] });
      expect(m.mentions).toEqual([
        { user_id: cy.id, external_id: 'cy', name: 'Cy' },
        { user_id: bo.id, external_id: 'bo', name: 'Bo' },
      ]);
      const events = await messageEvents(t, ch.id);
      expect(events.map((e) => e.type)).toEqual(['message.created', 'message.mentioned']);
      expect((events[0]!.payload.message as { mentions: unknown }).mentions).toEqual(m.mentions);
      expect(events[1]!.payload).toEqual({
        message_id: m.id,
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        by_user: { id: ana.id, external_id: 'ana', name: 'Ana' },
        mentions: m.mentions,
      });
      expect((await history(bo.api, ch.id)).messages[0]!.mentions).toEqual(m.mentions);
    });

    it('a mention of a non-member or an unknown user rejects the whole send, naming mentions[i]', async () => {
      const { ws, ch, ana } = await room(t);
      await ws.user('dan');
      const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'x',
        mentions: ['bo', 'dan', 'ghost'],
      });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([
        'mentions[1]',
        'mentions[2]',
      ]);
      expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
      expect(await messageEvents(t, ch.id)).toHaveLength(0);
    });

    it('no mentions: no mentions field and no message.mentioned', async () => {
      const { ch, ana } = await room(t);
      const m = await send(ana, ch.id, { content: 'nobody', mentions: [] });
      expect(m).not.toHaveProperty('mentions');
      expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual(['message.created']);
    });
  });

  describe('attachments', () => {
    it('must begin with the public attachment base URL', async () => {
      const { ws, ch, ana } = await room(t);
      for (const attachment_url of [
        'https://evil.example.com/cat.png',
        `${t.baseUrl}/elsewhere/cat.png`,
        `${t.baseUrl}/files/../v1/x.png`,
        `${t.baseUrl}/files/`,
      ]) {
        const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'look', attachment_url });
        expectError(res, 400, 'VALIDATION_ERROR');
      }
      expect((await history(ws.api, ch.id)).messages).toHaveLength(0);
    });

    it('an image URL makes an image message, a document a file message; an empty caption is fine with one', async () => {
      const { ch, ana } = await room(t);
      const img = await send(ana, ch.id, { attachment_url: `${t.baseUrl}/files/ws/abc/cat.PNG` });
      expect([img.type, img.content, img.attachment_url]).toEqual([
        'image',
        '',
        `${t.baseUrl}/files/ws/abc/cat.PNG`,
      ]);
      const doc = await send(ana, ch.id, {
        content: 'the report',
        attachment_url: `${t.baseUrl}/files/ws/abc/report.pdf`,
      });
      expect(doc.type).toBe('file');
    });
  });
});
