/**
 * /metrics after a little real traffic: REST sends of every kind and outcome, a socket sending, a
 * webhook delivered to a local receiver, pushes through the fake FCM. Every chat series is exposed,
 * with label values from its fixed set only, and the counters moved by what the traffic did.
 */
import { FakeFcm } from '../push/fcm';
import { moderate, PROFANE } from '../moderation/helpers';
import { startTestApp, TestApp } from '../support/app';
import { isIntegration } from '../support/databases';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket, TestSocket } from '../support/socket';
import { createWebhook, poll } from '../webhooks/helpers';

const SERIES = [
  'chat_events_total',
  'chat_messages_sent_total',
  'chat_message_send_duration_seconds',
  'chat_sockets_connected',
  'chat_socket_events_received_total',
  'chat_socket_events_emitted_total',
  'chat_realtime_publish_lag_seconds',
  'chat_event_follower_lag_events',
  'chat_event_follower_lag_seconds',
  'chat_webhook_deliveries_total',
  'chat_webhook_attempt_duration_seconds',
  'chat_webhook_backlog',
  'chat_push_sends_total',
  'chat_rate_limited_total',
  'chat_moderation_actions_total',
  'chat_db_pool_connections',
  'chat_redis_up',
  'http_request_duration_seconds',
];

/** Every sample of the exposition: `name{labels}` → value. */
type Samples = Map<string, number>;

function parse(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m) out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

/** The value of `name` with exactly these labels (prom-client writes them in labelNames order). */
function value(s: Samples, name: string, labels: Record<string, string> = {}): number {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const v = s.get(l ? `${name}{${l}}` : name);
  if (v === undefined) throw new Error(`no sample ${name}{${l}}`);
  return v;
}

/** Every value the label takes among the samples of `name`. */
function labelValues(s: Samples, name: string, label: string): string[] {
  const out = new Set<string>();
  for (const key of s.keys()) {
    if (!key.startsWith(`${name}{`)) continue;
    const m = new RegExp(`[{,]${label}="([^"]*)"`).exec(key);
    if (m) out.add(m[1]!);
  }
  return [...out].sort();
}

describe('metrics', () => {
  const fcm = new FakeFcm();
  let t: TestApp;
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser;
  let channel: { id: string };
  let socket: TestSocket;
  let before: Samples;
  let after: Samples;
  let text: string;

  const scrape = async (): Promise<string> => {
    const res = await t.http().get('/metrics');
    expect(res.status).toBe(200);
    return res.text;
  };
  // a series whose labels come from the log (chat_events_total by type) starts when its first event passes
  const delta = (name: string, labels: Record<string, string> = {}) =>
    value(after, name, labels) - (name === 'chat_events_total' ? 0 : value(before, name, labels));

  beforeAll(async () => {
    fcm.start();
    rx = await Receiver.start();
    t = await startTestApp({
      SERVICE_PUSH_SERVICE_ACCOUNT_FILE: fcm.serviceAccountFile,
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '4',
    });
    ws = await newWorkspace(t);
    [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    expect(res.status).toBe(201);
    channel = res.body;
    await moderate(ws, { action: 'reject', rules: ['profanity'] });
    const hook = rx.url(200);
    await createWebhook(ws, hook, ['message.created']);
    fcm.answers.set('tok-gone', 'unregistered');
    for (const token of ['tok-bo', 'tok-gone'])
      expect((await bo.api.post('/v1/me/devices', { token, platform: 'android' })).status).toBe(201);
    socket = await connectSocket(t.baseUrl, bo.token);
    before = parse(await scrape());

    const send = (u: TestUser, body: Record<string, unknown>) =>
      u.api.post(`/v1/channels/${channel.id}/messages`, body);
    const first = await send(ana, { content: 'hello', idempotency_key: 'k1' });
    expect(first.status).toBe(201);
    expect((await send(ana, { content: 'hello', idempotency_key: 'k1' })).status).toBe(200); // replayed
    expect((await send(ana, { content: 'in a thread', thread_id: first.body.id })).status).toBe(201);
    expect(
      (await ws.api.post('/v1/messages', { channel_id: channel.id, content: 'sys', system: true })).status,
    ).toBe(201);
    expect((await send(ana, { content: PROFANE })).status).toBe(422); // moderation
    expect((await send(ana, { content: 'over the rate' })).status).toBe(201); // ana's fourth counted send
    expect((await send(ana, { content: 'one too many' })).status).toBe(429);
    expect((await ana.api.post('/v1/channels/no-such-channel/messages', { content: 'x' })).status).toBe(404);
    const ack = await socket.emitAck('message.send', { channel_id: channel.id, content: 'from a socket' });
    expect(ack.ok).toBe(true);
    socket.socket.emit('no.such.event', {});
    await socket.waitFor('message.new', (e) => e.data.id === ack.data.id);

    // deliveries and pushes run after the sends: wait for what they do outside, then for the counters
    await rx.waitFor(hook, { count: 5 }); // hello, the reply, the system message, the fourth REST send, the socket's
    await poll(async () => fcm.requests.length >= 2, 'FCM requests');
    text = await poll(async () => {
      const s = await scrape();
      const samples = parse(s);
      return value(samples, 'chat_webhook_deliveries_total', { outcome: 'succeeded' }) >= 5 &&
        value(samples, 'chat_push_sends_total', { outcome: 'invalid_token' }) >= 1 &&
        value(samples, 'chat_socket_events_received_total', { event: 'other' }) >= 1
        ? s
        : null;
    }, 'the delivery, push and socket counters');
    after = parse(text);
  });
  afterAll(async () => {
    closeAllSockets();
    await t?.close();
    await rx?.close();
    fcm.stop();
  });

  it('exposes every series, with its type', () => {
    for (const name of SERIES)
      expect(text).toMatch(new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'));
  });

  it('labels sends by type and outcome from fixed sets, and counts each send once', () => {
    expect(labelValues(after, 'chat_messages_sent_total', 'type')).toEqual(['regular', 'reply', 'system']);
    expect(labelValues(after, 'chat_messages_sent_total', 'outcome')).toEqual([
      'created',
      'failed',
      'invalid',
      'rejected',
      'replayed',
    ]);
    const sent = (type: string, outcome: string) => delta('chat_messages_sent_total', { type, outcome });
    expect(sent('regular', 'created')).toBe(3); // hello, the fourth REST send, the socket's
    expect(sent('regular', 'replayed')).toBe(1);
    expect(sent('reply', 'created')).toBe(1);
    expect(sent('system', 'created')).toBe(1);
    expect(sent('regular', 'rejected')).toBe(2); // moderation, rate
    expect(sent('regular', 'invalid')).toBe(1); // no such channel
    expect(sent('regular', 'failed')).toBe(0);
    expect(delta('chat_message_send_duration_seconds_count', { transport: 'rest' })).toBe(8);
    expect(delta('chat_message_send_duration_seconds_count', { transport: 'socket' })).toBe(1);
  });

  it('counts the refusals of the rate limit and of moderation', () => {
    expect(delta('chat_rate_limited_total', { scope: 'send' })).toBe(1);
    expect(delta('chat_rate_limited_total', { scope: 'socket_event' })).toBe(0);
    expect(delta('chat_moderation_actions_total', { action: 'reject' })).toBe(1);
    expect(delta('chat_moderation_actions_total', { action: 'flag' })).toBe(0);
  });

  it('counts sockets and their events, known names and `other`', () => {
    expect(value(after, 'chat_sockets_connected')).toBe(1);
    expect(delta('chat_socket_events_received_total', { event: 'message.send' })).toBe(1);
    expect(delta('chat_socket_events_received_total', { event: 'other' })).toBe(1);
    expect(labelValues(after, 'chat_socket_events_received_total', 'event')).not.toContain('no.such.event');
    // hello, the system message, the fourth REST send and the socket's, in the channel's room at least
    expect(delta('chat_socket_events_emitted_total', { event: 'message.new' })).toBeGreaterThanOrEqual(4);
    expect(delta('chat_realtime_publish_lag_seconds_count')).toBeGreaterThanOrEqual(4);
    expect(delta('chat_events_total', { type: 'message.created' })).toBeGreaterThanOrEqual(4);
  });

  it('reports the lag of every log follower', () => {
    for (const follower of ['realtime', 'webhooks', 'push', 'search', 'previews']) {
      expect(value(after, 'chat_event_follower_lag_events', { follower })).toBeGreaterThanOrEqual(0);
      expect(value(after, 'chat_event_follower_lag_seconds', { follower })).toBeGreaterThanOrEqual(0);
    }
    expect(labelValues(after, 'chat_event_follower_lag_events', 'follower')).toEqual([
      'previews',
      'push',
      'realtime',
      'search',
      'webhooks',
    ]);
  });

  it('counts webhook deliveries in one counter and reads the backlog', () => {
    expect(delta('chat_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(5);
    expect(delta('chat_webhook_deliveries_total', { outcome: 'retry' })).toBe(0);
    expect(delta('chat_webhook_attempt_duration_seconds_count')).toBe(5);
    expect(text).not.toContain('chat_webhook_attempts_total');
    expect(value(after, 'chat_webhook_backlog')).toBeGreaterThanOrEqual(0);
  });

  it('counts pushes per token: sent, and the token FCM called unregistered', () => {
    expect(delta('chat_push_sends_total', { outcome: 'sent' })).toBeGreaterThanOrEqual(1);
    // at least once: jobs run concurrently, so two may meet the token before it is removed
    expect(delta('chat_push_sends_total', { outcome: 'invalid_token' })).toBeGreaterThanOrEqual(1);
    expect(delta('chat_push_sends_total', { outcome: 'failed' })).toBe(0);
  });

  if (isIntegration()) {
    it('reads the PostgreSQL pool (at most its 20 connections) and the connected Redis (1)', () => {
      const [inUse, idle, waiting] = ['in_use', 'idle', 'waiting'].map((state) =>
        value(after, 'chat_db_pool_connections', { state }),
      );
      // the scrape itself holds no pool connection; the traffic above left at least one open
      expect(inUse! + idle!).toBeGreaterThanOrEqual(1);
      expect(inUse! + idle!).toBeLessThanOrEqual(20);
      expect(waiting).toBe(0);
      expect(value(after, 'chat_redis_up')).toBe(1);
    });
  } else {
    it('reads the embedded pool (one connection) and Redis (none configured: 1)', () => {
      const [inUse, idle, waiting] = ['in_use', 'idle', 'waiting'].map((state) =>
        value(after, 'chat_db_pool_connections', { state }),
      );
      expect(inUse! + idle!).toBe(1);
      expect(waiting).toBeGreaterThanOrEqual(0);
      expect(value(after, 'chat_redis_up')).toBe(1);
    });
  }
});
