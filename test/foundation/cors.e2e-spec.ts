import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'net';
import { io } from 'socket.io-client';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/config.schema';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { isIntegration } from '../support/databases';
import { newWorkspace, TestUser } from '../support/fixtures';

/**
 * SERVICE_CORS_ORIGINS on REST and Socket.IO: preflights, headers on real responses, refused origins,
 * for an allow-list and for both defaults (any origin embedded, none with DATABASE_URL). The browser
 * itself is in cors.browser.e2e-spec.ts.
 */

const APP = 'https://app.example.com';
const DEV = 'http://localhost:5173';
const EVIL = 'https://evil.example.net';

function preflight(t: { http: () => request.Agent }, path: string, origin: string, method = 'POST') {
  return t
    .http()
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', 'authorization,content-type,x-request-id');
}

/** What a browser checks on a preflight from `origin` it may follow. */
function expectAllowedPreflight(res: request.Response, allowOrigin: string): void {
  expect(res.status).toBe(204);
  expect(res.headers['access-control-allow-origin']).toBe(allowOrigin);
  expect(res.headers['access-control-allow-methods']!.split(',')).toEqual(
    expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  );
  const headers = res.headers['access-control-allow-headers']!.toLowerCase().split(',');
  expect(headers).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id']));
  expect(res.headers['access-control-max-age']).toBe('600');
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
}

function expectExposed(res: request.Response): void {
  const exposed = res.headers['access-control-expose-headers']!.toLowerCase().split(',');
  expect(exposed).toEqual(expect.arrayContaining(['retry-after', 'x-request-id', 'idempotent-replayed']));
}

/** The Engine.IO handshake a browser's long-polling transport sends first. */
function pollingHandshake(t: { http: () => request.Agent }, origin?: string) {
  const r = t.http().get('/socket.io/?EIO=4&transport=polling');
  return origin ? r.set('Origin', origin) : r;
}

/** A websocket-only socket.io client that claims a browser origin (a Node client may send any header). */
function socketFrom(
  baseUrl: string,
  token: string,
  origin: string,
): Promise<{ ok: boolean; message?: string }> {
  const socket = io(baseUrl, {
    transports: ['websocket'],
    auth: { token },
    extraHeaders: { Origin: origin },
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve) => {
    socket.once('connect', () => {
      socket.close();
      resolve({ ok: true });
    });
    socket.once('connect_error', (e) => {
      socket.close();
      resolve({ ok: false, message: e.message });
    });
  });
}

describe('CORS with an allow-list (SERVICE_CORS_ORIGINS)', () => {
  let t: TestApp;
  let ana: TestUser;
  let channelId: string;

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_CORS_ORIGINS: `${APP}, ${DEV}` });
    const ws = await newWorkspace(t);
    ana = await ws.user('ana');
    await ws.user('bo');
    const ch = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      name: 'Team',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    channelId = (ch.body as { id: string }).id;
  });
  afterAll(async () => t.close());

  it('answers a preflight from an allowed origin 204, before auth, with the methods and headers the API uses', async () => {
    for (const origin of [APP, DEV]) {
      const res = await preflight(t, `/v1/channels/${channelId}/messages`, origin);
      expectAllowedPreflight(res, origin);
      expect(res.headers.vary).toMatch(/Origin/);
      expect(res.text).toBe('');
    }
    // a route that needs a user JWT, and one that does not exist: the preflight is answered either way
    expectAllowedPreflight(await preflight(t, '/v1/me/channels', APP, 'GET'), APP);
    expectAllowedPreflight(await preflight(t, '/v1/nowhere', APP, 'DELETE'), APP);
  });

  it('answers a preflight from any other origin without Access-Control-Allow-Origin', async () => {
    const res = await preflight(t, '/v1/me/channels', EVIL, 'GET');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // a near miss is another origin too
    for (const near of [
      'https://app.example.com:8443',
      'http://app.example.com',
      'https://app.example.com.evil.net',
    ]) {
      expect(
        (await preflight(t, '/v1/me/channels', near, 'GET')).headers['access-control-allow-origin'],
      ).toBeUndefined();
    }
  });

  it('does not let input checks reject a preflight', async () => {
    // %00 in a path is a 400 VALIDATION_ERROR for real requests (input hygiene) but never for a preflight
    expect((await t.http().get('/v1/users/a%00b').set('Origin', APP)).status).toBe(400);
    expectAllowedPreflight(await preflight(t, '/v1/users/a%00b', APP, 'PUT'), APP);
  });

  it('sets the headers on real responses: success, errors, and refused origins', async () => {
    const list = await t
      .http()
      .get('/v1/me/channels')
      .set('Origin', APP)
      .set('Authorization', `Bearer ${ana.token}`);
    expect(list.status).toBe(200);
    expect(list.headers['access-control-allow-origin']).toBe(APP);
    expect(list.headers.vary).toMatch(/Origin/);
    expectExposed(list);

    const sent = await t
      .http()
      .post(`/v1/channels/${channelId}/messages`)
      .set('Origin', DEV)
      .set('Authorization', `Bearer ${ana.token}`)
      .send({ content: 'from a browser', idempotency_key: 'k1' });
    expect(sent.status).toBe(201);
    expect(sent.headers['access-control-allow-origin']).toBe(DEV);
    const replay = await t
      .http()
      .post(`/v1/channels/${channelId}/messages`)
      .set('Origin', DEV)
      .set('Authorization', `Bearer ${ana.token}`)
      .send({ content: 'from a browser', idempotency_key: 'k1' });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expectExposed(replay);

    // errors are readable by the page too (the contract's error body, its request id)
    const denied = await t.http().get('/v1/me/channels').set('Origin', APP);
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe(APP);
    const bad = await t
      .http()
      .post(`/v1/channels/${channelId}/messages`)
      .set('Origin', APP)
      .set('Authorization', `Bearer ${ana.token}`)
      .set('Content-Type', 'application/json')
      .send('{"content":');
    expect(bad.status).toBe(400);
    expect(bad.headers['access-control-allow-origin']).toBe(APP);

    // another origin: the request is served (CORS is the browser's check) but carries no permission
    const evil = await t
      .http()
      .get('/v1/me/channels')
      .set('Origin', EVIL)
      .set('Authorization', `Bearer ${ana.token}`);
    expect(evil.status).toBe(200);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    // no Origin (a server, curl): nothing changes
    const server = await t.http().get('/v1/me/channels').set('Authorization', `Bearer ${ana.token}`);
    expect(server.status).toBe(200);
    expect(server.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('leaves signed upload and file URLs open to any origin', async () => {
    const res = await preflight(t, '/v1/uploads/some/key.png', EVIL, 'PUT');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toBe('PUT');
  });

  it('applies the same list to Socket.IO: long-polling headers and the handshake origin check', async () => {
    const allowed = await pollingHandshake(t, APP);
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe(APP);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');

    const refused = await pollingHandshake(t, EVIL);
    expect(refused.status).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();

    // not a browser, or the service's own pages: allowed
    expect((await pollingHandshake(t)).status).toBe(200);
    expect((await pollingHandshake(t, t.baseUrl)).status).toBe(200);

    // websocket: browsers apply no CORS there, so the handshake itself refuses the origin
    expect(await socketFrom(t.baseUrl, ana.token, APP)).toEqual({ ok: true });
    const ws = await socketFrom(t.baseUrl, ana.token, EVIL);
    expect(ws.ok).toBe(false);
  });
});

describe('CORS default of this mode', () => {
  let t: TestApp;
  let ana: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    const ws = await newWorkspace(t);
    ana = await ws.user('ana');
  });
  afterAll(async () => t.close());

  if (!isIntegration()) {
    it('embedded: any origin may call REST and open a socket', async () => {
      expectAllowedPreflight(await preflight(t, '/v1/me/channels', EVIL, 'GET'), '*');
      const list = await t
        .http()
        .get('/v1/me/channels')
        .set('Origin', EVIL)
        .set('Authorization', `Bearer ${ana.token}`);
      expect(list.status).toBe(200);
      expect(list.headers['access-control-allow-origin']).toBe('*');
      expectExposed(list);
      const polling = await pollingHandshake(t, EVIL);
      expect(polling.status).toBe(200);
      expect(polling.headers['access-control-allow-origin']).toBe(EVIL);
      expect(await socketFrom(t.baseUrl, ana.token, EVIL)).toEqual({ ok: true });
    });
  } else {
    it('with DATABASE_URL: no origin may until SERVICE_CORS_ORIGINS lists it', async () => {
      await expectNoOrigin(t, ana.token);
    });
  }
});

async function expectNoOrigin(
  t: { http: () => request.Agent; baseUrl: string },
  token: string,
): Promise<void> {
  for (const origin of [APP, EVIL]) {
    const pre = await preflight(t, '/v1/me/channels', origin, 'GET');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const list = await t
      .http()
      .get('/v1/me/channels')
      .set('Origin', origin)
      .set('Authorization', `Bearer ${token}`);
    expect(list.status).toBe(200);
    expect(list.headers['access-control-allow-origin']).toBeUndefined();
    expect((await pollingHandshake(t, origin)).status).toBe(403);
    expect((await socketFrom(t.baseUrl, token, origin)).ok).toBe(false);
  }
  expect((await pollingHandshake(t)).status).toBe(200);
  expect(await socketFrom(t.baseUrl, token, t.baseUrl)).toEqual({ ok: true });
}

if (!isIntegration()) {
  // On `npm test` there is no PostgreSQL: the production default is the list loadConfig yields with
  // DATABASE_URL (checked in config.schema.spec.ts), applied to the embedded app.
  describe('CORS production default (none) on the embedded database', () => {
    let app: NestExpressApplication;
    let t: { http: () => request.Agent; baseUrl: string };
    let token: string;
    beforeAll(async () => {
      const production = loadConfig({
        DATABASE_URL: 'postgresql://unused/db',
        SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      });
      expect(production.corsOrigins).toEqual([]);
      const config = {
        ...loadConfig({
          SERVICE_DATA_DIR: 'memory://',
          SERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
          LOG_LEVEL: 'silent',
        }),
        corsOrigins: production.corsOrigins,
      };
      app = await createApp(config, { logs: false });
      await app.listen(0, '127.0.0.1');
      const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
      t = { http: () => request.agent(app.getHttpServer()), baseUrl };
      const ws = await newWorkspace({ ...t, app, env: {}, close: async () => {} });
      token = (await ws.user('ana')).token;
    });
    afterAll(async () => app.close());

    it('no origin may call REST or open a socket; clients without Origin and same-origin pages may', async () => {
      await expectNoOrigin(t, token);
    });
  });
}
