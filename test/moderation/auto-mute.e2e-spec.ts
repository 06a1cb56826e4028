import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { room, send, sleep } from '../messages/helpers';
import { audit, loggedEvents, moderate, PROFANE } from './helpers';

describe('moderation auto_mute', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('the violation that reaches the threshold mutes the user (403 MUTED) until the mute expires', async () => {
    const { ws, ch, ana, bo } = await room(t);
    await moderate(ws, {
      action: 'flag',
      rules: ['profanity'],
      auto_mute: { enabled: true, violations: 2, window_seconds: 60, duration_seconds: 2 },
    });
    await send(ana, ch.id, PROFANE);
    await send(ana, ch.id, 'clean');
    const second = await send(ana, ch.id, 'shit'); // delivered (flag), and the second violation
    expectError(await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'clean' }), 403, 'MUTED');
    await send(bo, ch.id, 'bo is not muted');

    const entries = (await audit(ws)).entries;
    expect(entries.map((e) => [e.rule, e.action, e.message_id])).toEqual([
      ['profanity', 'auto_mute', second.id],
      ['profanity', 'flag', second.id],
      ['profanity', 'flag', expect.any(String)],
    ]);
    const events = await loggedEvents(t, ws.id, 'message.moderated');
    expect(events.map((e) => e.payload.action)).toEqual(['flag', 'flag', 'auto_mute']);
    expect(events[2]!.payload).toMatchObject({
      user_id: ana.id,
      channel_id: ch.id,
      rule: 'profanity',
      message_id: second.id,
    });

    await sleep(2100);
    await send(ana, ch.id, 'back again');
    // the count restarted with the mute: one more violation does not mute again
    await send(ana, ch.id, PROFANE);
    await send(ana, ch.id, 'still here');
  });

  it('rejected messages count as violations; the mute is recorded without a message id', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, {
      action: 'reject',
      rules: ['link'],
      auto_mute: { enabled: true, violations: 2, window_seconds: 60, duration_seconds: 60 },
    });
    for (let i = 0; i < 2; i++)
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'see example.com' }),
        422,
        'MESSAGE_REJECTED',
      );
    expectError(await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello' }), 403, 'MUTED');
    const [muteEntry] = (await audit(ws)).entries;
    expect(muteEntry).toMatchObject({ rule: 'link', action: 'auto_mute', message_id: null, user_id: ana.id });
    // the backend lifts it as any mute
    expect((await ws.api.delete('/v1/users/ana/mute')).status).toBe(204);
    await send(ana, ch.id, 'hello');
  });

  it('does nothing while auto_mute is disabled', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, {
      action: 'flag',
      rules: ['profanity'],
      auto_mute: { enabled: false, violations: 1 },
    });
    for (let i = 0; i < 3; i++) await send(ana, ch.id, PROFANE);
    expect((await audit(ws)).entries.map((e) => e.action)).toEqual(['flag', 'flag', 'flag']);
  });
});
