import { promises as dns } from 'dns';
import { hostname } from 'os';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { createWebhook, listDeliveries, provision, waitDeliveries, Webhook } from './helpers';

const GHOST = '01900000-0000-7000-8000-000000000000';

describe('webhook management', () => {
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

  it('creates a webhook with the contract fields; the secret is shown once', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const res = await ws.api.post('/v1/webhooks', {
      url,
      events: ['message.created', 'user.created'],
      description: 'crm sync',
    });
    expect(res.status).toBe(201);
    const wh = res.body as Webhook & { description: string; created_at: string };
    expect(wh).toMatchObject({
      url,
      events: ['message.created', 'user.created'],
      description: 'crm sync',
      enabled: true,
      signing: 'signing_secret',
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
    expect(wh.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(wh.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/); // Standard Webhooks: base64 of 32 bytes
    expect(wh.created_at).toMatch(/\.\d{3}Z$/);

    const got = await ws.api.get(`/v1/webhooks/${wh.id}`).expect(200);
    expect(got.body.signing_secret).toBeUndefined();
    const list = await ws.api.get('/v1/webhooks').expect(200);
    expect(list.body.webhooks.map((w: Webhook) => w.id)).toEqual([wh.id]);
    expect(JSON.stringify(list.body)).not.toContain(wh.signing_secret);
  });

  it('an api_secret webhook has no signing secret of its own and cannot rotate one', async () => {
    const ws = await newWorkspace(t);
    const wh = await createWebhook(ws, rx.url(200), ['user.created'], { signing: 'api_secret' });
    expect(wh.signing_secret).toBeNull();
    expectError(await ws.api.post(`/v1/webhooks/${wh.id}/rotate-secret`), 400, 'VALIDATION_ERROR');
  });

  it('validates the body: events, URL scheme, unknown fields, signing', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    for (const body of [
      { url, events: ['message.exploded'] },
      { url, events: [] },
      { url, events: 'message.created' },
      { url, events: ['message.created', 'message.created'] },
      { url: 'ftp://example.com/hook', events: ['message.created'] },
      { url: 'not a url', events: ['message.created'] },
      { url: 'javascript:alert(1)', events: ['message.created'] },
      { events: ['message.created'] },
      { url, events: ['message.created'], signing: 'md5' },
      { url, events: ['message.created'], secret: 'mine' },
    ]) {
      expectError(await ws.api.post('/v1/webhooks', body), 400, 'VALIDATION_ERROR');
    }
    expect((await ws.api.get('/v1/webhooks').expect(200)).body.webhooks).toHaveLength(0);
    // every SPEC.md event name is accepted
    const all = [
      'message.created',
      'message.updated',
      'message.deleted',
      'message.reaction.added',
      'message.reaction.removed',
      'message.mentioned',
      'message.moderated',
      'channel.created',
      'channel.deleted',
      'member.joined',
      'member.left',
      'user.created',
    ];
    await ws.api.post('/v1/webhooks', { url, events: all }).expect(201);
  });

  it('only a workspace key may manage webhooks', async () => {
    const ws = await newWorkspace(t);
    const ana = await ws.user('ana');
    expectError(
      await ana.api.post('/v1/webhooks', { url: rx.url(200), events: ['message.created'] }),
      403,
      'FORBIDDEN',
    );
    expectError(await ana.api.get('/v1/webhooks'), 403, 'FORBIDDEN');
  });

  it('PATCH changes url, events, description and enabled; DELETE answers 204 then 404', async () => {
    const ws = await newWorkspace(t);
    const wh = await createWebhook(ws, rx.url(200), ['message.updated'], { description: 'a' });
    const url2 = rx.url(200);
    const p = await ws.api
      .patch(`/v1/webhooks/${wh.id}`, { url: url2, events: ['user.created'], description: null })
      .expect(200);
    expect(p.body).toMatchObject({ url: url2, events: ['user.created'], description: null, enabled: true });
    const off = await ws.api.patch(`/v1/webhooks/${wh.id}`, { enabled: false }).expect(200);
    expect(off.body.enabled).toBe(false);
    expect(off.body.disabled_at).not.toBeNull();
    const on = await ws.api.patch(`/v1/webhooks/${wh.id}`, { enabled: true }).expect(200);
    expect(on.body).toMatchObject({
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    expectError(await ws.api.patch(`/v1/webhooks/${wh.id}`, { events: ['nope'] }), 400, 'VALIDATION_ERROR');
    expectError(
      await ws.api.patch(`/v1/webhooks/${wh.id}`, { signing: 'api_secret' }),
      400,
      'VALIDATION_ERROR',
    );
    await ws.api.delete(`/v1/webhooks/${wh.id}`).expect(204);
    expectError(await ws.api.get(`/v1/webhooks/${wh.id}`), 404, 'NOT_FOUND');
    expectError(await ws.api.delete(`/v1/webhooks/${wh.id}`), 404, 'NOT_FOUND');
  });

  it("answers 404 for an unknown webhook and for another workspace's webhook and deliveries", async () => {
    const a = await newWorkspace(t);
    const b = await newWorkspace(t);
    const wh = await createWebhook(a, rx.url(200), ['user.created']);
    await provision(a, 'ana');
    const [d] = await waitDeliveries(a, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded');
    const calls: [string, string, unknown?][] = [
      ['get', `/v1/webhooks/${wh.id}`],
      ['patch', `/v1/webhooks/${wh.id}`, { url: 'https://evil.example.com/steal' }],
      ['get', `/v1/webhooks/${wh.id}/deliveries`],
      ['get', `/v1/webhooks/${wh.id}/deliveries/${d!.id}`],
      ['post', `/v1/webhooks/${wh.id}/deliveries/${d!.id}/retry`],
      ['post', `/v1/webhooks/${wh.id}/rotate-secret`],
      ['delete', `/v1/webhooks/${wh.id}`],
    ];
    for (const [method, path, body] of calls) {
      expectError(await b.api.req(method as 'get', path, body), 404, 'NOT_FOUND');
    }
    for (const path of [
      `/v1/webhooks/${GHOST}`,
      '/v1/webhooks/not-a-uuid',
      `/v1/webhooks/${wh.id}/deliveries/${GHOST}`,
      `/v1/webhooks/${wh.id}/deliveries/nope`,
    ]) {
      expectError(await a.api.get(path), 404, 'NOT_FOUND');
    }
    expectError(await a.api.post(`/v1/webhooks/${wh.id}/deliveries/${GHOST}/retry`), 404, 'NOT_FOUND');
    expect((await b.api.get('/v1/webhooks').expect(200)).body.webhooks).toHaveLength(0);
    expect((await a.api.get(`/v1/webhooks/${wh.id}`).expect(200)).body.url).toBe(wh.url);
  });

  it('pages webhooks and the delivery log, newest first, and filters deliveries by status', async () => {
    const ws = await newWorkspace(t);
    const hooks: Webhook[] = [];
    for (let i = 0; i < 3; i++) hooks.push(await createWebhook(ws, rx.url(200), ['user.created']));
    const p1 = await ws.api.get('/v1/webhooks?limit=2').expect(200);
    expect(p1.body.webhooks.map((w: Webhook) => w.id)).toEqual([hooks[2]!.id, hooks[1]!.id]);
    expect(p1.body.has_more).toBe(true);
    const p2 = await ws.api.get(`/v1/webhooks?limit=2&before=${p1.body.next_cursor}`).expect(200);
    expect(p2.body).toEqual({
      webhooks: [expect.objectContaining({ id: hooks[0]!.id })],
      has_more: false,
      next_cursor: null,
    });

    let n = 0;
    const url = rx.url(() => (n++ % 2 === 0 ? 200 : 400));
    const wh = await createWebhook(ws, url, ['user.created']);
    for (let i = 0; i < 5; i++) {
      await provision(ws, `u${i}`);
      await waitDeliveries(
        ws,
        wh.id,
        (l) => l.length === i + 1 && l.every((d) => d.status !== 'pending'),
        `delivery ${i}`,
      );
    }
    const all = await listDeliveries(ws, wh.id);
    expect(all.map((d) => d.status)).toEqual(['succeeded', 'failed', 'succeeded', 'failed', 'succeeded']);
    const keys = Object.keys(all[0]!).sort();
    expect(keys).toEqual(
      expect.arrayContaining([
        'id',
        'event_id',
        'event',
        'status',
        'attempts',
        'response_status',
        'response_body',
        'error',
        'next_attempt_at',
        'created_at',
        'updated_at',
      ]),
    );
    const page1 = await ws.api.get(`/v1/webhooks/${wh.id}/deliveries?limit=2`).expect(200);
    expect(page1.body.deliveries.map((d: { id: string }) => d.id)).toEqual(all.slice(0, 2).map((d) => d.id));
    expect(page1.body.has_more).toBe(true);
    const page2 = await ws.api
      .get(`/v1/webhooks/${wh.id}/deliveries?limit=2&before=${page1.body.next_cursor}`)
      .expect(200);
    expect(page2.body.deliveries.map((d: { id: string }) => d.id)).toEqual(all.slice(2, 4).map((d) => d.id));
    const page3 = await ws.api
      .get(`/v1/webhooks/${wh.id}/deliveries?limit=2&before=${page2.body.next_cursor}`)
      .expect(200);
    expect(page3.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(page3.body.deliveries).toHaveLength(1);

    expect((await listDeliveries(ws, wh.id, '&status=failed')).map((d) => d.status)).toEqual([
      'failed',
      'failed',
    ]);
    expect(await listDeliveries(ws, wh.id, '&status=pending')).toEqual([]);
    expectError(await ws.api.get(`/v1/webhooks/${wh.id}/deliveries?status=lost`), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get(`/v1/webhooks/${wh.id}/deliveries?limit=101`), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get(`/v1/webhooks/${wh.id}/deliveries?before=garbage`), 400, 'VALIDATION_ERROR');
  });
});

describe('webhook targets with SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS=false', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({
      SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.1',
      SERVICE_WEBHOOK_RETRY_JITTER: '0',
    });
    ws = await newWorkspace(t);
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://127.1/hook',
    'http://2130706433/hook',
    'http://0.0.0.0/hook',
    'http://localhost:8080/hook',
    'http://api.localhost/hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.10/hook',
    'http://100.64.0.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:a9fe:a9fe]/hook',
    'http://[fe80::1]/hook',
    'http://[fd00:ec2::254]/hook',
    'http://[64:ff9b::a00:1]/hook',
  ])('refuses %s with 400', async (url) => {
    const res = await ws.api.post('/v1/webhooks', { url, events: ['message.created'] });
    expectError(res, 400, 'VALIDATION_ERROR');
  });

  it('refuses a host name that resolves to a loopback address', async () => {
    const name = hostname();
    const addrs = await dns.lookup(name, { all: true }).catch(() => []);
    if (!addrs.some((a) => a.address.startsWith('127.') || a.address === '::1')) return; // this machine's name is not loopback here
    expectError(
      await ws.api.post('/v1/webhooks', { url: `http://${name}:8080/hook`, events: ['message.created'] }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('accepts public addresses', async () => {
    await ws.api
      .post('/v1/webhooks', { url: 'https://1.1.1.1/hook', events: ['message.created'] })
      .expect(201);
    await ws.api
      .post('/v1/webhooks', { url: 'http://[2606:4700:4700::1111]/hook', events: ['message.created'] })
      .expect(201);
  });

  it('refuses at delivery time too: a target that became private fails without any request', async () => {
    const wh = await createWebhook(ws, 'https://1.1.1.1/hook', ['user.created']);
    // as if DNS now pointed at the receiver on loopback (rebinding) or the row predates the policy
    const url = rx.url(200);
    await t.app.get(DataSource).query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [wh.id, url]);
    await provision(ws, 'victim');
    const [d] = await waitDeliveries(
      ws,
      wh.id,
      (l) => l[0]?.status === 'permanently_failed',
      'refused attempts',
    );
    expect(d!.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect(d!.attempts).toBe(2);
    expect(rx.received(url)).toHaveLength(0);
  });
});
