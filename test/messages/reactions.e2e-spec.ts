import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, messageEvents, Msg, room, send } from './helpers';

const reactionsOf = (m: Msg) =>
  Object.fromEntries(m.reactions.map((r) => [r.emoji, [r.count, r.reacted_by_me]]));

describe('reactions (one per user per message)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('adding answers 200 with the message; the same emoji again is a no-op without an event', async () => {
    const { ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'react to me');
    const r1 = await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    expect([r1.status, r1.body.id]).toEqual([200, m.id]);
    expect(r1.body.reactions).toEqual([{ emoji: '👍', count: 1, reacted_by_me: true }]);
    const r2 = await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    expect(r2.body.reactions).toEqual([{ emoji: '👍', count: 1, reacted_by_me: true }]);
    const events = await messageEvents(t, ch.id);
    expect(events.map((e) => e.type)).toEqual(['message.created', 'message.reaction.added']);
    expect(events[1]!.payload).toEqual({
      reaction: {
        message_id: m.id,
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        user_id: bo.id,
        emoji: '👍',
      },
    });
  });

  it('a different emoji replaces the old one: removed(old) then added(new), consecutive in the channel sequence', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const m = await send(ana, ch.id, 'pick one');
    await cy.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    const res = await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '🎉' });
    expect(reactionsOf(res.body)).toEqual({ '👍': [1, false], '🎉': [1, true] });
    const events = (await messageEvents(t, ch.id)).slice(-2);
    expect(events.map((e) => [e.type, (e.payload.reaction as { emoji: string }).emoji])).toEqual([
      ['message.reaction.removed', '👍'],
      ['message.reaction.added', '🎉'],
    ]);
    expect(events[1]!.seq).toBe(events[0]!.seq! + 1);
    // others see counts and their own flag
    const seen = (await history(cy.api, ch.id)).messages[0]!;
    expect(reactionsOf(seen)).toEqual({ '👍': [1, true], '🎉': [1, false] });
  });

  it('removing answers 200 and drops it; removing one never added is a no-op without an event', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const m = await send(ana, ch.id, 'undo');
    await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    await cy.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    const r1 = await bo.api.delete(`/v1/messages/${m.id}/reactions/${encodeURIComponent('👍')}`);
    expect(r1.status).toBe(200);
    expect(reactionsOf(r1.body)).toEqual({ '👍': [1, false] });
    const r2 = await bo.api.delete(`/v1/messages/${m.id}/reactions/${encodeURIComponent('🎉')}`);
    expect(r2.status).toBe(200);
    expect(reactionsOf(r2.body)).toEqual({ '👍': [1, false] });
    const types = (await messageEvents(t, ch.id)).map((e) => e.type);
    expect(types).toEqual([
      'message.created',
      'message.reaction.added',
      'message.reaction.added',
      'message.reaction.removed',
    ]);
  });

  it('accepts single emoji (with modifiers, ZWJ sequences, flags) and :shortcodes:; refuses the rest with 400', async () => {
    const { ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'emoji');
    for (const emoji of ['👍🏽', '👨‍👩‍👧', '🇫🇷', '❤️', ':party_parrot:', '1️⃣']) {
      const res = await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji });
      expect([emoji, res.status]).toEqual([emoji, 200]);
    }
    for (const emoji of ['', 'x'.repeat(65), 'ok', '👍👍', ':not a code:', `:${'a'.repeat(63)}:`, 42]) {
      expectError(await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji }), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await bo.api.delete(`/v1/messages/${m.id}/reactions/${'x'.repeat(65)}`),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('reacting to an unsent message is 422 MESSAGE_DELETED', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'gone');
    await ana.api.delete(`/v1/messages/${m.id}`);
    expectError(await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }), 422, 'MESSAGE_DELETED');
    expectError(
      await ws.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍', user_external_id: 'bo' }),
      422,
      'MESSAGE_DELETED',
    );
  });

  it('a non-member cannot react (403); unknown messages are 404', async () => {
    const { ws, ch, ana } = await room(t);
    const dan = await ws.user('dan');
    const m = await send(ana, ch.id, 'members only');
    expectError(await dan.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }), 403, 'NOT_A_MEMBER');
    expectError(
      await dan.api.delete(`/v1/messages/${m.id}/reactions/${encodeURIComponent('👍')}`),
      403,
      'NOT_A_MEMBER',
    );
    expectError(
      await ana.api.post('/v1/messages/01900000-0000-7000-8000-000000000003/reactions', { emoji: '👍' }),
      404,
      'NOT_FOUND',
    );
    expectError(await ana.api.post('/v1/messages/nope/reactions', { emoji: '👍' }), 404, 'NOT_FOUND');
    expect((await history(ana.api, ch.id)).messages[0]!.reactions).toEqual([]);
  });

  it('a backend reacts for a user named in the body, and removes by query or body', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'proxy');
    expectError(
      await ws.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }),
      400,
      'VALIDATION_ERROR',
    );
    const add = await ws.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍', user_external_id: 'bo' });
    expect(add.body.reactions).toEqual([{ emoji: '👍', count: 1, reacted_by_me: true }]);
    await ws.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '🔥', user_external_id: 'ana' });
    const byQuery = await ws.api.delete(
      `/v1/messages/${m.id}/reactions/${encodeURIComponent('👍')}?user_external_id=bo`,
    );
    expect(reactionsOf(byQuery.body)).toEqual({ '🔥': [1, false] });
    const byBody = await ws.api.delete(`/v1/messages/${m.id}/reactions/${encodeURIComponent('🔥')}`, {
      user_external_id: 'ana',
    });
    expect(byBody.body.reactions).toEqual([]);
    expectError(
      await ws.api.delete(`/v1/messages/${m.id}/reactions/${encodeURIComponent('🔥')}`),
      400,
      'VALIDATION_ERROR',
    );
    expect(reactionsOf((await history(bo.api, ch.id)).messages[0]!)).toEqual({});
    expectError(
      await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍', user_external_id: 'ana' }),
      400,
      'VALIDATION_ERROR',
    );
  });
});
