import { DataSource } from 'typeorm';
import { PushGateway } from '../../src/infra/push/push-gateway';
import { DevicesRepository } from '../../src/push/devices.repository';
import { PushProcessor } from '../../src/push/push.processor';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { ACCESS_TOKEN, FakeFcm, FcmRequest } from './fcm';

const BODY = 'the secret plan: meet at 5';

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Push runs the real firebase-admin code; Google's OAuth token endpoint and FCM's HTTP v1 API are
 * intercepted in this process (nock), which is where the in-process app sends them.
 */
describe('push notifications through FCM', () => {
  const fcm = new FakeFcm();
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  let cy: TestUser;
  let di: TestUser;
  let ed: TestUser;
  let channel: { id: string; external_id: string };

  beforeAll(async () => {
    fcm.start();
    t = await startTestApp({ SERVICE_PUSH_SERVICE_ACCOUNT_FILE: fcm.serviceAccountFile });
  });
  afterAll(async () => {
    await t?.close();
    fcm.stop();
  });
  beforeEach(async () => {
    fcm.reset();
    ws = await newWorkspace(t);
    ana = await ws.user('ana', 'Ana Lima');
    bo = await ws.user('bo', 'Bo');
    cy = await ws.user('cy', 'Cy');
    di = await ws.user('di', 'Di');
    ed = await ws.user('ed', 'Ed');
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      name: 'Team',
      created_by: 'ana',
      member_external_ids: ['bo', 'cy', 'di'],
    });
    expect(res.status).toBe(201);
    channel = res.body;
  });

  const register = async (u: TestUser, token: string, platform = 'android') => {
    const res = await u.api.post('/v1/me/devices', { token, platform });
    expect(res.status).toBe(201);
  };
  const send = async (u: TestUser, content: string) => {
    const res = await u.api.post(`/v1/channels/${channel.id}/messages`, { content });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };
  const tokensSent = (reqs: FcmRequest[] = fcm.requests) => reqs.map((r) => r.body.message.token).sort();

  it('sends every other member’s devices exactly the minimal notification: title, channel_id and message_id', async () => {
    await register(bo, 'tok-bo-phone');
    await register(bo, 'tok-bo-web', 'web');
    await register(cy, 'tok-cy', 'ios');
    await register(ana, 'tok-ana');
    await register(ed, 'tok-ed'); // not a member
    const m = await send(ana, BODY);

    await until('three FCM requests', () => fcm.requests.length >= 3);
    await sleep(300);
    expect(tokensSent()).toEqual(['tok-bo-phone', 'tok-bo-web', 'tok-cy']);
    for (const r of fcm.requests) {
      expect(r.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
      expect(r.body).toEqual({
        message: {
          token: r.body.message.token,
          notification: { title: 'Ana Lima sent a message' },
          data: { channel_id: channel.id, message_id: m.id },
        },
      });
    }
    expect(JSON.stringify(fcm.requests)).not.toContain('secret plan');
    // the OAuth token came from the service account's own signed assertion
    expect(fcm.tokenRequests.length).toBeGreaterThanOrEqual(1);
  });

  it('does not push to the sender, nor to members who block the sender', async () => {
    await register(ana, 'tok-ana');
    await register(bo, 'tok-bo');
    await register(di, 'tok-di');
    expect((await di.api.post('/v1/me/blocks', { external_id: 'ana' })).status).toBe(201);
    await send(ana, BODY);
    await until('one FCM request', () => fcm.requests.length >= 1);
    await sleep(500);
    expect(tokensSent()).toEqual(['tok-bo']);

    // and the other way round: di's own messages still reach ana (blocking is one-way)
    fcm.reset();
    await send(di, 'hello');
    await until('two FCM requests', () => fcm.requests.length >= 2);
    await sleep(300);
    expect(tokensSent()).toEqual(['tok-ana', 'tok-bo']);
    expect(fcm.requests[0]!.body.message.notification).toEqual({ title: 'Di sent a message' });
  });

  it('deletes tokens FCM reports as unregistered or invalid, keeps the others', async () => {
    await register(bo, 'tok-bo-alive');
    await register(bo, 'tok-bo-gone');
    await register(cy, 'tok-cy-garbage');
    await register(cy, 'tok-cy-flaky');
    fcm.answers.set('tok-bo-gone', 'unregistered');
    fcm.answers.set('tok-cy-garbage', 'invalid');
    fcm.answers.set('tok-cy-flaky', 'unavailable');
    await send(ana, BODY);

    const devicesOf = async (u: TestUser) =>
      ((await u.api.get('/v1/me/devices')).body.devices as { token: string }[]).map((d) => d.token).sort();
    await until(
      'dead tokens removed',
      async () => (await devicesOf(bo)).length === 1 && (await devicesOf(cy)).length === 1,
    );
    expect(await devicesOf(bo)).toEqual(['tok-bo-alive']);
    expect(await devicesOf(cy)).toEqual(['tok-cy-flaky']);
    expect(tokensSent().filter((x) => x !== 'tok-cy-flaky')).toEqual([
      'tok-bo-alive',
      'tok-bo-gone',
      'tok-cy-garbage',
    ]);

    // the next message goes only to the live tokens
    fcm.reset();
    fcm.answers.set('tok-cy-flaky', 'ok');
    await send(ana, 'again');
    await until('two FCM requests', () => fcm.requests.length >= 2);
    await sleep(300);
    expect(tokensSent()).toEqual(['tok-bo-alive', 'tok-cy-flaky']);
  });

  it('batches 500 tokens per multicast', async () => {
    const devices = t.app.get(DevicesRepository);
    for (let i = 0; i < 520; i++)
      await devices.upsert(ws.id, i % 2 ? bo.id : cy.id, `tok-many-${String(i).padStart(3, '0')}`, 'android');
    // the per-user cap keeps 50 each: 100 tokens; add more users to pass 500
    const extra: TestUser[] = [];
    for (let u = 0; u < 10; u++) extra.push(await ws.user(`member-${u}`));
    expect(
      (
        await ws.api.post(`/v1/channels/${channel.id}/members`, {
          member_external_ids: extra.map((e) => e.external_id),
        })
      ).status,
    ).toBe(200);
    for (const [u, user] of extra.entries()) {
      for (let i = 0; i < 50; i++) await devices.upsert(ws.id, user.id, `tok-x-${u}-${i}`, 'android');
    }
    const spy = jest.spyOn(t.app.get(PushGateway), 'send');
    try {
      await send(ana, BODY);
      await until('600 FCM requests', () => fcm.requests.length >= 600, 30_000);
      await sleep(300);
      expect(fcm.requests).toHaveLength(600);
      expect(new Set(tokensSent()).size).toBe(600);
      expect(spy.mock.calls.map(([tokens]) => tokens.length)).toEqual([500, 100]);
    } finally {
      spy.mockRestore();
    }
  });

  it('pushes a fired reminder to its user’s devices only, from a muted channel too: "Reminder" and where, never the content', async () => {
    await register(bo, 'tok-bo-phone');
    await register(bo, 'tok-bo-web', 'web');
    await register(cy, 'tok-cy');
    const m = await send(ana, BODY);
    await until('the message’s pushes', () => fcm.requests.length >= 3);
    await sleep(300);
    fcm.reset();
    const muted = await bo.api.patch(`/v1/me/channels/${channel.id}/state`, { muted_until: 'forever' });
    expect(muted.status).toBe(200);
    const at = new Date(Date.now() + 1200).toISOString();
    const r = await bo.api.post(`/v1/messages/${m.id}/reminder`, { remind_at: at });
    expect(r.status).toBe(201);
    await until('two FCM requests', () => fcm.requests.length >= 2);
    await sleep(500);
    expect(tokensSent()).toEqual(['tok-bo-phone', 'tok-bo-web']);
    for (const req of fcm.requests)
      expect(req.body).toEqual({
        message: {
          token: req.body.message.token,
          notification: { title: 'Reminder' },
          data: { channel_id: channel.id, message_id: m.id, reminder_id: r.body.id },
        },
      });
    expect(JSON.stringify(fcm.requests)).not.toContain('secret plan');
  });

  it('sends nothing for system messages, nor for a message unsent before its push went out', async () => {
    await register(bo, 'tok-bo');
    const sys = await ws.api.post('/v1/messages', {
      channel_id: channel.id,
      system: true,
      content: 'Ana renamed the channel',
    });
    expect(sys.status).toBe(201);
    await sleep(1500);
    expect(fcm.requests).toHaveLength(0);
    // a normal message afterwards still pushes (the relay moved past the system message)
    const m = await send(ana, BODY);
    await until('one FCM request', () => fcm.requests.length >= 1);
    await sleep(300);

    // the job re-reads the message: once unsent, a (re)run of its job sends nothing
    fcm.reset();
    expect((await ana.api.delete(`/v1/messages/${m.id}`)).status).toBe(200);
    const [event] = await t.app
      .get(DataSource)
      .query<{ id: string }[]>(
        `SELECT id FROM events WHERE type = 'message.created' AND payload->'message'->>'id' = $1`,
        [m.id],
      );
    await t.app.get(PushProcessor).handle({ eventId: event!.id });
    expect(fcm.requests).toHaveLength(0);
  });
});

describe('push is off without a service account', () => {
  const fcm = new FakeFcm();
  let t: TestApp;
  beforeAll(async () => {
    fcm.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    fcm.stop();
  });

  it('registers devices but sends nothing', async () => {
    const ws = await newWorkspace(t);
    const ana = await ws.user('ana');
    const bo = await ws.user('bo');
    expect((await bo.api.post('/v1/me/devices', { token: 'tok-bo', platform: 'ios' })).status).toBe(201);
    const ch = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] });
    expect((await ana.api.post(`/v1/channels/${ch.body.id}/messages`, { content: BODY })).status).toBe(201);
    await sleep(1500);
    expect(fcm.requests).toHaveLength(0);
    expect(fcm.tokenRequests).toHaveLength(0);
  });
});
