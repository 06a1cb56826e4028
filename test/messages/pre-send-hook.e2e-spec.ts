import { createHmac } from 'crypto';
import { group } from './helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Answer, Receiver, ReceivedRequest } from '../support/receiver';
import { closeAllSockets, connectSocket } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

const json = (body: unknown, delayMs?: number): Answer => ({
  status: 200,
  body: JSON.stringify(body),
  delayMs,
});

/** CONTRACT §27's pre-send hook: on the embedded database and on PostgreSQL. */
describe('the pre-send hook', () => {
  let t: TestApp;
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ SERVICE_SCHEDULER_INTERVAL_MS: '200' });
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
    await rx.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo', 'cy']);
  });
  afterEach(() => closeAllSockets());

  const setHook = async (hook: unknown) => {
    const res = await ws.api.patch('/v1/workspace/settings', { pre_send_hook: hook });
    expect(res.status).toBe(200);
    return res.body.pre_send_hook;
  };
  const send = (u: TestUser, body: Record<string, unknown>) =>
    u.api.post(`/v1/channels/${ch.id}/messages`, body);
  const history = async () =>
    (await ws.api.get(`/v1/channels/${ch.id}/messages`)).body.messages as { id: string; content: string }[];
  const calls = (url: string) => rx.received(url).filter((r) => r.method === 'POST');

  it('is a setting with defaults, validated, merged, disabled and removed', async () => {
    expect((await ws.api.get('/v1/workspace')).body.settings.pre_send_hook).toBeNull();
    const url = rx.url(() => json({ action: 'allow' }));
    expect(await setHook({ url })).toEqual({ url, enabled: true, timeout_ms: 1500, on_failure: 'allow' });
    for (const bad of [
      { url, timeout_ms: 99 },
      { url, timeout_ms: 5001 },
      { url, on_failure: 'maybe' },
      { url: 'ftp://127.0.0.1/x' },
      { url: 'not a url' },
    ]) {
      const res = await ws.api.patch('/v1/workspace/settings', { pre_send_hook: bad });
      expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect(await setHook({ enabled: false, timeout_ms: 300 })).toEqual({
      url,
      enabled: false,
      timeout_ms: 300,
      on_failure: 'allow',
    });
    expect((await send(ana, { content: 'unchecked' })).status).toBe(201);
    expect(calls(url)).toHaveLength(0);
    expect(await setHook(null)).toBeNull();
    const noUrl = await ws.api.patch('/v1/workspace/settings', { pre_send_hook: { enabled: true } });
    expect([noUrl.status, noUrl.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('allow: a signed message.pre_send call with the message (and the id it gets), its user and channel', async () => {
    const url = rx.url(() => json({ action: 'allow' }));
    await setHook({ url });
    const res = await send(ana, { content: 'hello hook', mentions: ['bo'], metadata: { k: 'v' } });
    expect(res.status).toBe(201);
    const [call] = calls(url) as [ReceivedRequest];
    expect(call.headers['user-agent']).toMatch(/^chat-service-hooks\//);
    expect(call.json).toEqual({
      id: call.headers['x-service-event-id'],
      type: 'message.pre_send',
      workspace_id: ws.id,
      created_at: expect.any(String),
      data: {
        message: {
          id: res.body.id,
          channel_id: ch.id,
          channel_external_id: ch.external_id,
          content: 'hello hook',
          type: 'text',
          attachment_url: null,
          parent_id: null,
          thread_id: null,
          show_in_channel: false,
          mentions: [{ user_id: bo.id, external_id: 'bo', name: expect.anything() }],
          metadata: { k: 'v' },
        },
        user: { id: ana.id, external_id: 'ana', name: expect.anything(), metadata: expect.any(Object) },
        channel: expect.objectContaining({
          id: ch.id,
          external_id: ch.external_id,
          type: 'group',
          member_count: 3,
        }),
      },
    });
    const ts = call.headers['x-service-timestamp'] as string;
    const hmac = createHmac('sha256', ws.apiSecret).update(`${ts}.`).update(call.raw).digest('hex');
    expect(call.headers['x-service-signature']).toBe(`sha256=${hmac}`);
    const wid = call.headers['webhook-id'] as string;
    const std = createHmac('sha256', Buffer.from(ws.apiSecret, 'utf8'))
      .update(`${wid}.${call.headers['webhook-timestamp'] as string}.`)
      .update(call.raw)
      .digest('base64');
    expect(String(call.headers['webhook-signature']).split(' ')).toContain(`v1,${std}`);
    expect((await history()).map((m) => [m.id, m.content])).toEqual([[res.body.id, 'hello hook']]);
  });

  it('reject: 422 with the reason, nothing stored or announced; a retry with the same key calls again, a replay does not', async () => {
    let verdict: unknown = { action: 'reject', reason: 'no phone numbers please' };
    const url = rx.url(() => json(verdict));
    const hooks = rx.url(200);
    await createWebhook(ws, hooks, ['message.created']);
    await setHook({ url });
    const socket = await connectSocket(t.baseUrl, bo.token);
    const refused = await send(ana, { content: 'call me at 555', idempotency_key: 'k' });
    expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
      422,
      'MESSAGE_REJECTED',
      [{ field: 'pre_send_hook', message: 'no phone numbers please' }],
    ]);
    verdict = { action: 'allow' };
    const sent = await send(ana, { content: 'call me at 555', idempotency_key: 'k' });
    expect(sent.status).toBe(201);
    verdict = { action: 'reject' };
    const replay = await send(ana, { content: 'call me at 555', idempotency_key: 'k' });
    expect([replay.status, replay.body.id]).toEqual([200, sent.body.id]);
    expect(calls(url)).toHaveLength(2);
    // the refused send left nothing: one message, one message.new, one webhook, the allowed one's
    await socket.waitFor('message.new', (e) => e.data.id === sent.body.id);
    await rx.waitFor(hooks, { pred: (x) => eventOf(x) === 'message.created' });
    expect(socket.events.filter((e) => e.name === 'message.new')).toHaveLength(1);
    expect(rx.received(hooks, (x) => eventOf(x) === 'message.created')).toHaveLength(1);
    expect((await history()).map((m) => m.id)).toEqual([sent.body.id]);
  });

  it('modify: the new content, metadata and mentions are validated, stored and shown everywhere; an invalid one follows on_failure', async () => {
    let change: unknown = { content: 'card #### ####', metadata: { scrubbed: true }, mentions: ['cy'] };
    const url = rx.url(() => json({ action: 'modify', message: change }));
    const hooks = rx.url(200);
    await createWebhook(ws, hooks, ['message.created']);
    await setHook({ url });
    const socket = await connectSocket(t.baseUrl, bo.token);
    const res = await send(ana, { content: 'card 4111 1111', metadata: { raw: true }, mentions: ['bo'] });
    expect(res.status).toBe(201);
    expect([
      res.body.content,
      res.body.metadata,
      res.body.mentions.map((x: { external_id: string }) => x.external_id),
    ]).toEqual(['card #### ####', { scrubbed: true }, ['cy']]);
    const live = await socket.waitFor('message.new', (e) => e.data.id === res.body.id);
    expect(live.data.content).toBe('card #### ####');
    const [hook] = await rx.waitFor(hooks, { pred: (x) => eventOf(x) === 'message.created' });
    expect(hook!.json.data.message.content).toBe('card #### ####');
    expect(JSON.stringify(await history())).not.toContain('4111');

    change = { mentions: ['nobody-here'] }; // not a member: an invalid modification, on_failure allow
    const kept = await send(ana, { content: 'as written' });
    expect([kept.status, kept.body.content, kept.body.mentions]).toEqual([201, 'as written', undefined]);
    await setHook({ on_failure: 'reject' });
    change = { content: 'x'.repeat(9000) }; // over the size limit
    const refused = await send(ana, { content: 'as written' });
    expect([refused.status, refused.body.error.details]).toEqual([
      422,
      [{ field: 'pre_send_hook', message: 'unavailable' }],
    ]);
  });

  it('failures follow on_failure, one attempt each, and a hook that hangs is cut at timeout_ms', async () => {
    const cases: Record<string, () => Answer> = {
      status500: () => ({ status: 500, body: 'boom' }),
      notJson: () => ({ status: 200, body: 'allow' }),
      unknownAction: () => json({ action: 'shrug' }),
      hangs: () => json({ action: 'reject', reason: 'too late' }, 3000),
    };
    for (const [name, answer] of Object.entries(cases)) {
      const url = rx.url(answer);
      await setHook({ url, timeout_ms: 300, on_failure: 'allow' });
      const started = Date.now();
      const res = await send(ana, { content: `despite ${name}` });
      expect([name, res.status, res.body.content]).toEqual([name, 201, `despite ${name}`]);
      expect(Date.now() - started).toBeLessThan(1500);
      expect(calls(url)).toHaveLength(1);
      await setHook({ on_failure: 'reject' });
      const refused = await send(ana, { content: `refused for ${name}` });
      expect([name, refused.status, refused.body.error.details]).toEqual([
        name,
        422,
        [{ field: 'pre_send_hook', message: 'unavailable' }],
      ]);
    }
  });

  it('socket sends and scheduled messages call it; backend sends only with run_hooks; system messages and muted users never', async () => {
    const url = rx.url(() => json({ action: 'reject', reason: 'hook says no' }));
    await setHook({ url });
    const socket = await connectSocket(t.baseUrl, ana.token);
    const ack = await socket.emitAck('message.send', { channel_id: ch.id, content: 'by socket' });
    expect([ack.ok, ack.error?.code]).toEqual([false, 'MESSAGE_REJECTED']);
    expect(calls(url)).toHaveLength(1);
    expect(
      (await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'backend', user_external_id: 'ana' }))
        .status,
    ).toBe(201);
    expect(
      (await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'system', system: true })).status,
    ).toBe(201);
    expect(calls(url)).toHaveLength(1);
    const hooked = await ws.api.post('/v1/messages', {
      channel_id: ch.id,
      user_external_id: 'ana',
      content: 'x',
      run_hooks: true,
    });
    expect([hooked.status, hooked.body.error.code]).toEqual([422, 'MESSAGE_REJECTED']);
    expect(calls(url)).toHaveLength(2);
    expect((await ws.api.post('/v1/users/bo/mute', {})).status).toBeLessThan(300);
    expect((await send(bo, { content: 'muted' })).body.error.code).toBe('MUTED');
    expect(calls(url)).toHaveLength(2);

    // a scheduled message meets the hook when it fires: refused, it is listed as failed
    const s = await send(ana, { content: 'later', scheduled_at: new Date(Date.now() + 1500).toISOString() });
    expect(s.status).toBe(202);
    expect(calls(url)).toHaveLength(2);
    const failed = await socket.waitFor(
      'scheduled.failed',
      (e) => e.data.scheduled_message_id === s.body.scheduled_message.id,
      10_000,
    );
    expect(failed.data.error.code).toBe('MESSAGE_REJECTED');
    expect(calls(url)).toHaveLength(3);
  });
});
