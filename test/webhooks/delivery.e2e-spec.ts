import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import {
  createWebhook,
  expectedSignature,
  forUser,
  getWebhook,
  listDeliveries,
  poll,
  provision,
  sleep,
  waitDeliveries,
} from './helpers';

describe('webhook delivery', () => {
  let t: TestApp;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2,0.2,0.2',
      SERVICE_WEBHOOK_RETRY_JITTER: '0',
      SERVICE_WEBHOOK_AUTO_DISABLE_FAILURES: '6',
      SERVICE_WEBHOOK_TIMEOUT_MS: '1000',
    });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('POSTs the signed envelope with the documented headers, verifiable over the raw bytes', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    expect(wh.signing_secret).toMatch(/^whsec_/);
    const userId = await provision(ws, 'zoe');

    const [req] = await rx.waitFor(url, { pred: forUser('zoe') });
    const h = req!.headers;
    expect(req!.method).toBe('POST');
    expect(h['content-type']).toBe('application/json');
    expect(h['user-agent']).toMatch(/^chat-service-webhooks\/\d+\.\d+\.\d+/);
    expect(h['x-service-event']).toBe('user.created');
    const ts = h['x-service-timestamp'] as string;
    expect(ts).toMatch(/^\d+$/);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(h['x-service-signature']).toBe(expectedSignature(wh.signing_secret!, ts, req!.raw));

    const body = req!.json;
    expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'event', 'event_id', 'workspace_id']);
    expect(body.event).toBe('user.created');
    expect(body.workspace_id).toBe(ws.id);
    expect(body.event_id).toBe(h['x-service-event-id']);
    expect(body.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body.data.user).toMatchObject({ id: userId, external_id: 'zoe', name: 'ZOE' });

    const [d] = await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded');
    expect(d).toMatchObject({
      event_id: body.event_id,
      event: 'user.created',
      attempts: 1,
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
  });

  it('signs with the workspace api_secret when the webhook says so', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created'], { signing: 'api_secret' });
    expect(wh.signing).toBe('api_secret');
    await provision(ws, 'ana');
    const [req] = await rx.waitFor(url, { pred: forUser('ana') });
    const ts = req!.headers['x-service-timestamp'] as string;
    expect(req!.headers['x-service-signature']).toBe(expectedSignature(ws.apiSecret, ts, req!.raw));
  });

  it('delivers only subscribed events, and an update of a user fires nothing', async () => {
    const ws = await newWorkspace(t);
    const subscribed = rx.url(200);
    const other = rx.url(200);
    await createWebhook(ws, subscribed, ['user.created']);
    await createWebhook(ws, other, ['message.created']);
    await provision(ws, 'ana');
    await rx.waitFor(subscribed, { pred: forUser('ana') });
    await ws.api.put('/v1/users/ana', { name: 'Ana 2' }).expect(200);
    await sleep(700);
    expect(rx.received(subscribed)).toHaveLength(1);
    expect(rx.received(other)).toHaveLength(0);
  });

  it('does not deliver an event committed before the webhook existed', async () => {
    const ws = await newWorkspace(t);
    await provision(ws, 'early');
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'late');
    await rx.waitFor(url, { pred: forUser('late') });
    await sleep(500);
    expect(rx.received(url).map((r) => r.json.data.user.external_id)).toEqual(['late']);
    expect((await listDeliveries(ws, wh.id)).length).toBe(1);
  });

  it('retries 5xx on the schedule, then marks the delivery permanently_failed', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(503);
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'ana');
    const reqs = await rx.waitFor(url, { count: 4 });
    expect(new Set(reqs.map((r) => r.json.event_id)).size).toBe(1);
    const [d] = await waitDeliveries(
      ws,
      wh.id,
      (l) => l[0]?.status === 'permanently_failed',
      'permanently_failed',
    );
    expect(d).toMatchObject({ attempts: 4, response_status: 503, next_attempt_at: null });
    await sleep(600);
    expect(rx.received(url)).toHaveLength(4);
    // ~0.2 s apart (no jitter)
    const gaps = reqs.slice(1).map((r, i) => r.at - reqs[i]!.at);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(150);
    expect((await getWebhook(ws, wh.id)).consecutive_failures).toBe(4);

    const one = await ws.api.get(`/v1/webhooks/${wh.id}/deliveries/${d!.id}`).expect(200);
    expect(
      one.body.attempt_log.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome]),
    ).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'retry'],
      [4, 'permanently_failed'],
    ]);
  });

  it('treats a 4xx as a terminal failure, stores the first 1,024 bytes of the body, and a manual retry succeeds', async () => {
    const ws = await newWorkspace(t);
    const long = 'é'.repeat(600) + 'x'.repeat(2000); // 1,200 bytes of two-byte characters first
    let status = 422;
    const url = rx.url(() => ({ status, body: long }));
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'ana');
    const [d] = await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'failed', 'failed');
    expect(d).toMatchObject({ attempts: 1, response_status: 422 });
    expect(d!.response_body).toBe('é'.repeat(512));
    await sleep(600);
    expect(rx.received(url)).toHaveLength(1);

    status = 200;
    const r = await ws.api.post(`/v1/webhooks/${wh.id}/deliveries/${d!.id}/retry`).expect(202);
    expect(r.body.status).toBe('pending');
    const [again] = await waitDeliveries(
      ws,
      wh.id,
      (l) => l[0]?.status === 'succeeded',
      'succeeded after retry',
    );
    expect(again).toMatchObject({ id: d!.id, attempts: 2, response_status: 200 });
    const reqs = rx.received(url);
    expect(reqs).toHaveLength(2);
    expect(reqs[1]!.json.event_id).toBe(reqs[0]!.json.event_id);
  });

  it('refuses a manual retry while the delivery is pending', async () => {
    const ws = await newWorkspace(t);
    // the receiver answers only once the test has asked for the retry: the attempt is surely in flight
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    const url = rx.url(() => ({ status: 200, until: asked }));
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'ana');
    await rx.waitFor(url);
    const [d] = await listDeliveries(ws, wh.id);
    expect(d!.status).toBe('pending');
    const res = await ws.api.post(`/v1/webhooks/${wh.id}/deliveries/${d!.id}/retry`);
    answer();
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded');
  });

  it('records network errors and timeouts and retries them', async () => {
    const ws = await newWorkspace(t);
    const closed = `http://127.0.0.1:1/nothing-listens`;
    const slow = rx.url(() => ({ status: 200, delayMs: 1500 }));
    const a = await createWebhook(ws, closed, ['user.created']);
    const b = await createWebhook(ws, slow, ['user.created']);
    await provision(ws, 'ana');
    const [da] = await waitDeliveries(
      ws,
      a.id,
      (l) => l[0]?.status === 'permanently_failed',
      'network error exhausted',
    );
    expect(da).toMatchObject({ attempts: 4, response_status: null });
    expect(da!.error).toMatch(/ECONNREFUSED/);
    const [db] = await waitDeliveries(
      ws,
      b.id,
      (l) => l[0]?.status === 'permanently_failed',
      'timeouts exhausted',
      20_000,
    );
    expect(db!.error).toMatch(/timed out after 1000 ms/);
  });

  it('auto-disables after the threshold of consecutive failures, then PATCH enabled:true re-enables and resets', async () => {
    const ws = await newWorkspace(t);
    let status = 500;
    const url = rx.url(() => status);
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'u1'); // 4 failed attempts
    await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'permanently_failed', 'first exhausted');
    expect(await getWebhook(ws, wh.id)).toMatchObject({ enabled: true, consecutive_failures: 4 });
    await provision(ws, 'u2'); // two more reach the threshold of 6; the third attempt is due while disabled
    const off = await poll(async () => {
      const w = await getWebhook(ws, wh.id);
      return w.enabled ? null : w;
    }, 'auto-disable');
    expect(off.consecutive_failures).toBe(6);
    expect(off.disabled_at).not.toBeNull();
    expect(off.disabled_reason).toMatch(/6 consecutive/);
    const [d2] = await waitDeliveries(
      ws,
      wh.id,
      (l) => l[0]?.status === 'permanently_failed',
      'due while disabled',
    );
    expect(d2).toMatchObject({ attempts: 2, error: 'the webhook is disabled' });
    expect(rx.received(url)).toHaveLength(6);

    // events while disabled are not delivered
    await provision(ws, 'u3');
    await sleep(600);
    expect(rx.received(url)).toHaveLength(6);

    const on = await ws.api.patch(`/v1/webhooks/${wh.id}`, { enabled: true }).expect(200);
    expect(on.body).toMatchObject({
      enabled: true,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
    status = 200;
    await provision(ws, 'u4');
    await rx.waitFor(url, { pred: forUser('u4') });
    await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'delivery after re-enabling');
  });

  it('a success resets consecutive_failures', async () => {
    const ws = await newWorkspace(t);
    let status = 500;
    const url = rx.url(() => status);
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'u1');
    await rx.waitFor(url, { count: 2 });
    status = 204;
    await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded after two failures');
    expect((await getWebhook(ws, wh.id)).consecutive_failures).toBe(0);
  });

  it('does not follow redirects', async () => {
    const ws = await newWorkspace(t);
    const target = rx.url(200);
    const url = rx.url(() => ({ status: 302, body: target }));
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'ana');
    const [d] = await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'failed', 'failed');
    expect(d).toMatchObject({ response_status: 302, error: 'redirects are not followed' });
    expect(rx.received(target)).toHaveLength(0);
  });

  it('a deleted webhook gets nothing more, and a rotated secret signs from then on', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    const rot = await ws.api.post(`/v1/webhooks/${wh.id}/rotate-secret`).expect(200);
    expect(rot.body.signing_secret).toMatch(/^whsec_/);
    expect(rot.body.signing_secret).not.toBe(wh.signing_secret);
    await provision(ws, 'ana');
    const [req] = await rx.waitFor(url);
    expect(req!.headers['x-service-signature']).toBe(
      expectedSignature(rot.body.signing_secret, req!.headers['x-service-timestamp'] as string, req!.raw),
    );
    await ws.api.delete(`/v1/webhooks/${wh.id}`).expect(204);
    await provision(ws, 'bo');
    await sleep(700);
    expect(rx.received(url)).toHaveLength(1);
  });

  it('keeps other workspaces out of the deliveries', async () => {
    const a = await newWorkspace(t);
    const b = await newWorkspace(t);
    const url = rx.url(200);
    await createWebhook(a, url, ['user.created']);
    await provision(b, 'b-user');
    await provision(a, 'a-user');
    await rx.waitFor(url, { pred: forUser('a-user') });
    await sleep(400);
    expect(rx.received(url).every((r) => r.json.workspace_id === a.id)).toBe(true);
    expect(rx.received(url)).toHaveLength(1);
  });
});
