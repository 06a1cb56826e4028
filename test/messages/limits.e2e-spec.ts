import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, room, send } from './helpers';

describe('send rate limit (SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '3' });
  });
  afterAll(async () => t.close());

  it('the 4th send within a minute is 429 RATE_LIMITED with Retry-After in whole seconds; others are unaffected', async () => {
    const { ws, ch, ana, bo } = await room(t);
    for (let i = 0; i < 3; i++) await send(ana, ch.id, `burst ${i}`);
    const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'one too many' });
    expectError(res, 429, 'RATE_LIMITED');
    const retryAfter = res.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // a minute at most, plus the part of the next one the sliding estimate still counts the burst in:
    // with 3 sends a minute, 1 + (1 − 2/3) minutes after the start of the minute they were sent in
    expect(Number(retryAfter)).toBeLessThanOrEqual(80);
    // the limit is per user, whichever credential sends
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'via backend',
        user_external_id: 'ana',
      }),
      429,
      'RATE_LIMITED',
    );
    await send(bo, ch.id, 'bo is fine');
    const h = await history(ws.api, ch.id);
    expect(h.messages.filter((m) => m.user?.external_id === 'ana')).toHaveLength(3);
  });

  it('system messages are exempt', async () => {
    const { ws, ch } = await room(t);
    for (let i = 0; i < 5; i++) {
      expect(
        (await ws.api.post('/v1/messages', { channel_id: ch.id, content: `system ${i}`, system: true }))
          .status,
      ).toBe(201);
    }
  });

  it('size is checked before rate: oversized sends do not use up the limit', async () => {
    const { ch, cy } = await room(t);
    for (let i = 0; i < 5; i++)
      expectError(
        await cy.api.post(`/v1/channels/${ch.id}/messages`, { content: 'a'.repeat(9000) }),
        413,
        'MESSAGE_TOO_LARGE',
      );
    await send(cy, ch.id, 'still allowed');
  });
});
