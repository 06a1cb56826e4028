import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, room, send } from '../messages/helpers';
import { audit, MASKED, moderate, PROFANE } from './helpers';

describe('moderation rules × actions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('is off by default, and off when disabled even with rules configured', async () => {
    const { ws, ch, ana } = await room(t);
    expect((await send(ana, ch.id, PROFANE)).content).toBe(PROFANE);
    await moderate(ws, { enabled: false, action: 'reject', rules: ['profanity'] });
    expect((await send(ana, ch.id, PROFANE)).content).toBe(PROFANE);
    expect((await audit(ws)).entries).toEqual([]);
  });

  const samples = {
    profanity: { text: 'what the fuck is this', masked: 'what the *** is this' },
    link: { text: 'deal at example.com/x today', masked: 'deal at *** today' },
    phone: { text: 'call me at (415) 555-2671 ok', masked: 'call me at *** ok' },
  } as const;

  describe.each(Object.entries(samples))('%s', (rule, { text, masked }) => {
    it('flag: delivered unchanged and recorded', async () => {
      const { ws, ch, ana } = await room(t);
      await moderate(ws, { action: 'flag', rules: [rule] });
      const m = await send(ana, ch.id, text);
      expect(m.content).toBe(text);
      expect((await audit(ws)).entries).toEqual([
        expect.objectContaining({
          rule,
          action: 'flag',
          message_id: m.id,
          user_id: ana.id,
          channel_id: ch.id,
        }),
      ]);
    });

    it('mask: the matched span is replaced by *** and stored so', async () => {
      const { ws, ch, ana, bo } = await room(t);
      await moderate(ws, { action: 'mask', rules: [rule] });
      const m = await send(ana, ch.id, text);
      expect(m.content).toBe(masked);
      expect((await history(bo.api, ch.id)).messages[0]!.content).toBe(masked);
      const [entry] = (await audit(ws)).entries;
      expect(entry).toMatchObject({ rule, action: 'mask', message_id: m.id });
      expect(entry!.excerpt).toBe(text); // the original, for the moderator
    });

    it('reject: 422 MESSAGE_REJECTED, nothing stored, recorded without a message id', async () => {
      const { ws, ch, ana } = await room(t);
      await moderate(ws, { action: 'reject', rules: [rule] });
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: text }),
        422,
        'MESSAGE_REJECTED',
      );
      expect((await history(ws.api, ch.id)).messages).toEqual([]);
      expect((await audit(ws)).entries).toEqual([
        expect.objectContaining({
          rule,
          action: 'reject',
          message_id: null,
          user_id: ana.id,
          channel_id: ch.id,
        }),
      ]);
    });
  });

  describe('flood', () => {
    it('allows max_repeats identical messages in the window; the next one violates (flag, mask, reject)', async () => {
      const { ws, ch, ana, bo } = await room(t);
      await moderate(ws, {
        action: 'reject',
        rules: ['flood'],
        flood: { max_repeats: 2, window_seconds: 30 },
      });
      await send(ana, ch.id, 'Buy my stuff');
      await send(ana, ch.id, 'buy  MY stuff'); // the same text once normalised
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'buy my stuff' }),
        422,
        'MESSAGE_REJECTED',
      );
      await send(ana, ch.id, 'something else');
      await send(bo, ch.id, 'buy my stuff'); // another user's count is their own

      await moderate(ws, { action: 'mask' });
      expect((await send(ana, ch.id, 'buy my stuff')).content).toBe('***');
      await moderate(ws, { action: 'flag' });
      expect((await send(ana, ch.id, 'buy my stuff')).content).toBe('buy my stuff');
      expect((await audit(ws)).entries.map((e) => [e.rule, e.action])).toEqual([
        ['flood', 'flag'],
        ['flood', 'mask'],
        ['flood', 'reject'],
      ]);
    });

    it('forgets repeats older than window_seconds', async () => {
      const { ws, ch, ana } = await room(t);
      await moderate(ws, {
        action: 'reject',
        rules: ['flood'],
        flood: { max_repeats: 1, window_seconds: 1 },
      });
      // (that a repeat inside the window is refused is the test above, with a window no slow machine
      // outlasts: here a second send at once could itself land after 1 s on a loaded machine)
      await send(ana, ch.id, 'again');
      await new Promise((r) => setTimeout(r, 1100));
      await send(ana, ch.id, 'again');
    });

    it('does not count edits as repeats', async () => {
      const { ws, ch, ana } = await room(t);
      await moderate(ws, {
        action: 'reject',
        rules: ['flood'],
        flood: { max_repeats: 1, window_seconds: 30 },
      });
      const m = await send(ana, ch.id, 'same');
      expect((await ana.api.patch(`/v1/messages/${m.id}`, { content: 'same' })).status).toBe(200);
      expect((await ana.api.patch(`/v1/messages/${m.id}`, { content: 'same' })).status).toBe(200);
    });
  });

  it('applies only the configured rules', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'reject', rules: ['link'] });
    expect((await send(ana, ch.id, PROFANE)).content).toBe(PROFANE);
    expect((await send(ana, ch.id, 'call +1 415 555 2671')).content).toBe('call +1 415 555 2671');
    expectError(
      await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'see https://example.org' }),
      422,
      'MESSAGE_REJECTED',
    );
    await moderate(ws, { rules: [] });
    expect((await send(ana, ch.id, 'see https://example.org')).content).toBe('see https://example.org');
  });

  it('masks every rule that matches and records each', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'mask', rules: ['profanity', 'link', 'phone'] });
    const m = await send(ana, ch.id, 'shit, see example.com or call +44 20 7946 0958');
    expect(m.content).toBe('***, see *** or call ***');
    expect((await audit(ws)).entries.map((e) => e.rule).sort()).toEqual(['link', 'phone', 'profanity']);
  });

  it('matches whole words only, Unicode-aware, case-insensitively, with the custom blocklist', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'mask', rules: ['profanity'], blocklist: ['zorblax', 'Grüß Gott'] });
    const cases: [string, string][] = [
      ['you are a zorblax today', 'you are a *** today'],
      ['the zorblaxian fleet near Scunthorpe', 'the zorblaxian fleet near Scunthorpe'],
      ['zorblaxian and ZORBLAX', 'zorblaxian and ***'],
      ['a classic assassin from Essex', 'a classic assassin from Essex'],
      ['grüß gott, Fuck!', '***, ***!'],
      ['zorblaxé is a word', 'zorblaxé is a word'],
      ['ＦＵＣＫ', '***'],
    ];
    for (const [input, expected] of cases) expect((await send(ana, ch.id, input)).content).toBe(expected);
  });

  it('lets through what only looks like a phone number or a link', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'reject', rules: ['phone', 'link', 'profanity'] });
    for (const text of [
      'The price is $1,299.99',
      'order #123456789 shipped',
      'see you on 2026-11-21 at 10:30',
      'upgrade to version 1.2.3',
      'node.js works, e.g. with vue.js',
      'Scunthorpe, classic, assassin, Essex',
    ]) {
      expect((await send(ana, ch.id, text)).content).toBe(text);
    }
    expect((await audit(ws)).entries).toEqual([]);
  });

  it('moderates backend sends for a user, but never system messages', async () => {
    const { ws, ch } = await room(t);
    await moderate(ws, { action: 'reject', rules: ['profanity'] });
    const sys = await ws.api.post('/v1/messages', { channel_id: ch.id, content: PROFANE, system: true });
    expect([sys.status, sys.body.content]).toEqual([201, PROFANE]);
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: PROFANE, user_external_id: 'ana' }),
      422,
      'MESSAGE_REJECTED',
    );
    await moderate(ws, { action: 'mask' });
    const res = await ws.api.post('/v1/messages', {
      channel_id: ch.external_id,
      content: PROFANE,
      user_external_id: 'bo',
    });
    expect([res.status, res.body.content]).toEqual([201, MASKED]);
  });

  it('an idempotent replay answers the stored (masked) message and records nothing more', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'mask', rules: ['profanity'] });
    const first = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
      content: PROFANE,
      idempotency_key: 'k1',
    });
    const again = await ana.api.post(`/v1/channels/${ch.id}/messages`, {
      content: PROFANE,
      idempotency_key: 'k1',
    });
    expect([first.status, again.status, again.body.id, again.body.content]).toEqual([
      201,
      200,
      first.body.id,
      MASKED,
    ]);
    expect((await audit(ws)).entries).toHaveLength(1);
  });
});
