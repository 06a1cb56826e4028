/**
 * Load shedding (issue 29) on one instance whose bound is one request in flight: what finds it full
 * waits its turn briefly, then is answered 503 UNAVAILABLE with Retry-After while the probes and the
 * scrape still answer; the typed client waits as told and its send goes through once, when there is room.
 */
import { request } from 'http';
import { ChatClient } from '../../packages/client/src';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { holdOne } from './held-request';

/** Requests the instance refused (chat_shed_total, every reason). */
const shedCount = (metrics: string) =>
  [...metrics.matchAll(/^chat_shed_total\{reason="\w+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);

describe('load shedding', () => {
  let t: TestApp;
  let a: TestWorkspace;
  let b: TestWorkspace;
  let ana: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MAX_REQUESTS_IN_FLIGHT: '1', SERVICE_MAX_QUEUE_WAIT_MS: '50' });
    a = await newWorkspace(t);
    b = await newWorkspace(t);
    ana = (await a.users('ana', 'bo'))[0]!;
    const ch = await a.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    expect(ch.status).toBe(201);
  });
  afterAll(() => t?.close());

  it('answers 503 with Retry-After once the instance is full, and keeps answering its probes', async () => {
    const held = await holdOne(b);
    const started = Date.now();
    const refused = await a.api.get('/v1/workspace');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('UNAVAILABLE');
    expect(refused.headers['retry-after']).toBe('1');
    expect(Date.now() - started).toBeLessThan(1_000); // at once, not after a queue
    expect((await t.http().get('/readyz')).status).toBe(200);
    expect((await t.http().get('/healthz')).status).toBe(200);
    const metrics = await t.http().get('/metrics');
    expect(shedCount(metrics.text)).toBeGreaterThan(0);
    expect(metrics.text).toMatch(/chat_requests_in_flight 1\b/);
    expect(await held.release()).toBe(201);
    expect((await a.api.get('/v1/workspace')).status).toBe(200);
  });

  it('counts a request once its body is read: one sent slowly holds no turn', async () => {
    const body = JSON.stringify({ name: 'slow' });
    const slow = request(`${t.baseUrl}/v1/users/slow-body`, {
      method: 'PUT',
      headers: {
        authorization: a.api.authorization!,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    const slowAnswered = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      slow.on('error', reject);
    });
    slow.write(body.slice(0, 3)); // and the rest a second later
    await new Promise((r) => setTimeout(r, 200));
    const others = [];
    for (let i = 0; i < 3; i++) others.push((await b.api.get('/v1/workspace')).status);
    expect(others).toEqual([200, 200, 200]); // the one turn of the instance was free
    await new Promise((r) => setTimeout(r, 800));
    slow.end(body.slice(3));
    expect(await slowAnswered).toBe(201);
  });

  it('the typed client waits for Retry-After and sends once when there is room', async () => {
    const client = new ChatClient({
      baseUrl: t.baseUrl,
      token: ana.token,
      sendRetry: { minDelayMs: 10 },
    });
    const held = await holdOne(b);
    const sent = client.sendMessage('team', { content: 'after the rush' });
    await new Promise((r) => setTimeout(r, 300)); // refused by now, waiting out its Retry-After
    const started = Date.now();
    expect(await held.release()).toBe(201);
    const message = await sent;
    expect(Date.now() - started).toBeLessThan(5_000);
    const history = (await client.listMessages('team')).messages.filter(
      (m) => m.content === 'after the rush',
    );
    expect(history.map((m) => m.id)).toEqual([message.id]);
    const shed = shedCount((await t.http().get('/metrics')).text);
    expect(shed).toBeGreaterThanOrEqual(2); // the client's first attempt was refused too
    client.disconnect();
  });
});
