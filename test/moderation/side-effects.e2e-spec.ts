import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Receiver } from '../support/receiver';
import { history, messageEvents, room, send, sleep } from '../messages/helpers';
import { createWebhook, eventOf } from '../webhooks/helpers';
import { audit, loggedEvents, MASKED, moderate, PROFANE } from './helpers';

describe('moderation side effects: events, webhooks, edits', () => {
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

  it('reject: no message row, no message events, but an audit row and a message.moderated event without message_id', async () => {
    const { ws, ch, ana } = await room(t);
    const url = rx.url(200);
    await createWebhook(ws, url, ['message.created', 'message.moderated']);
    await moderate(ws, { action: 'reject', rules: ['profanity'] });
    expectError(
      await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: PROFANE }),
      422,
      'MESSAGE_REJECTED',
    );

    expect((await history(ws.api, ch.id)).messages).toEqual([]);
    expect(await messageEvents(t, ch.id)).toEqual([]);
    const [logged] = await loggedEvents(t, ws.id, 'message.moderated');
    // a webhook-only event: not channel-scoped, so it takes no realtime seq
    expect([logged!.channel_id, logged!.seq]).toEqual([null, null]);

    const [req] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'message.moderated' });
    expect(req!.json.data).toEqual({
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      user_id: ana.id,
      rule: 'profanity',
      action: 'reject',
      excerpt: PROFANE,
    });
    await sleep(300);
    expect(rx.received(url, (r) => eventOf(r) === 'message.created')).toEqual([]);
    const [entry] = (await audit(ws)).entries;
    expect(entry).toMatchObject({ rule: 'profanity', action: 'reject', message_id: null, excerpt: PROFANE });
  });

  it('mask and flag: the message and its message.moderated event (with message_id) commit together', async () => {
    const { ws, ch, ana } = await room(t);
    const url = rx.url(200);
    await createWebhook(ws, url, ['message.created', 'message.moderated']);
    await moderate(ws, { action: 'mask', rules: ['profanity'] });
    const m = await send(ana, ch.id, PROFANE);
    const [moderated] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'message.moderated' });
    expect(moderated!.json.data).toEqual({
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      user_id: ana.id,
      message_id: m.id,
      rule: 'profanity',
      action: 'mask',
      excerpt: PROFANE,
    });
    const [created] = await rx.waitFor(url, { pred: (r) => eventOf(r) === 'message.created' });
    expect(created!.json.data.message.content).toBe(MASKED); // nothing of the original leaks
    expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual(['message.created']);
  });

  it('edits are moderated again: mask stores the masked edit, flag records it with the message id', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'mask', rules: ['profanity'] });
    const m = await send(ana, ch.id, 'all good here');
    const edited = await ana.api.patch(`/v1/messages/${m.id}`, { content: PROFANE });
    expect([edited.status, edited.body.content]).toEqual([200, MASKED]);
    expect((await history(ws.api, ch.id)).messages[0]!.content).toBe(MASKED);
    const updated = (await messageEvents(t, ch.id)).filter((e) => e.type === 'message.updated');
    expect((updated[0]!.payload.message as { content: string }).content).toBe(MASKED);

    await moderate(ws, { action: 'flag' });
    const flagged = await ana.api.patch(`/v1/messages/${m.id}`, { content: 'shit happens' });
    expect([flagged.status, flagged.body.content]).toEqual([200, 'shit happens']);
    expect((await audit(ws)).entries.map((e) => [e.action, e.message_id])).toEqual([
      ['flag', m.id],
      ['mask', m.id],
    ]);
  });

  it('a rejected edit leaves the message as it was, fires no message.updated, and is recorded', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'reject', rules: ['link'] });
    const m = await send(ana, ch.id, 'before');
    expectError(
      await ana.api.patch(`/v1/messages/${m.id}`, { content: 'now at example.com/x' }),
      422,
      'MESSAGE_REJECTED',
    );
    const [stored] = (await history(ws.api, ch.id)).messages;
    expect([stored!.content, stored!.edited_at]).toEqual(['before', null]);
    expect((await messageEvents(t, ch.id)).map((e) => e.type)).toEqual(['message.created']);
    const [logged] = await loggedEvents(t, ws.id, 'message.moderated');
    // the message exists (unchanged), so the event names it
    expect(logged!.payload).toMatchObject({ rule: 'link', action: 'reject', message_id: m.id });
  });

  it('a backend edit of a user message is moderated too', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'mask', rules: ['profanity'] });
    const m = await send(ana, ch.id, 'fine');
    const res = await ws.api.patch(`/v1/messages/${m.id}`, { content: PROFANE });
    expect([res.status, res.body.content]).toEqual([200, MASKED]);
  });
});
