import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

const tokensOf = (res: { body: { devices: { token: string }[] } }) =>
  res.body.devices.map((d) => d.token).sort();

describe('devices (CONTRACT §5)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    ana = await ws.user('ana');
    bo = await ws.user('bo');
  });

  it('registers (201), lists and unregisters (204) the caller’s devices', async () => {
    const res = await ana.api.post('/v1/me/devices', { token: 'fcm:token-1', platform: 'ios' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      token: 'fcm:token-1',
      platform: 'ios',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await ana.api.post('/v1/me/devices', { token: 'fcm:token-2', platform: 'web' })).status).toBe(
      201,
    );
    // registering the same token again is harmless and can change the platform
    expect((await ana.api.post('/v1/me/devices', { token: 'fcm:token-1', platform: 'android' })).status).toBe(
      201,
    );
    const list = await ana.api.get('/v1/me/devices');
    expect(list.status).toBe(200);
    expect(tokensOf(list)).toEqual(['fcm:token-1', 'fcm:token-2']);
    expect(list.body.devices.find((d: { token: string }) => d.token === 'fcm:token-1').platform).toBe(
      'android',
    );
    expect((await ana.api.delete('/v1/me/devices/fcm:token-1')).status).toBe(204);
    expect((await ana.api.delete('/v1/me/devices/fcm:token-1')).status).toBe(204);
    expect(tokensOf(await ana.api.get('/v1/me/devices'))).toEqual(['fcm:token-2']);
  });

  it('re-registering a token moves it to the caller; another user cannot delete it', async () => {
    await ana.api.post('/v1/me/devices', { token: 'shared-phone', platform: 'android' });
    expect((await bo.api.post('/v1/me/devices', { token: 'shared-phone', platform: 'android' })).status).toBe(
      201,
    );
    expect(tokensOf(await ana.api.get('/v1/me/devices'))).toEqual([]);
    expect(tokensOf(await bo.api.get('/v1/me/devices'))).toEqual(['shared-phone']);
    expect((await ana.api.delete('/v1/me/devices/shared-phone')).status).toBe(204);
    expect(tokensOf(await bo.api.get('/v1/me/devices'))).toEqual(['shared-phone']);
  });

  it('tokens are per workspace: another tenant registering the same token changes nothing here', async () => {
    await ana.api.post('/v1/me/devices', { token: 'same-token', platform: 'ios' });
    const other = await newWorkspace(t);
    const zed = await other.user('zed');
    expect((await zed.api.post('/v1/me/devices', { token: 'same-token', platform: 'ios' })).status).toBe(201);
    expect(tokensOf(await ana.api.get('/v1/me/devices'))).toEqual(['same-token']);
    expect((await other.api.delete('/v1/users/ana/devices/same-token')).status).toBe(404);
    expect(tokensOf(await ana.api.get('/v1/me/devices'))).toEqual(['same-token']);
  });

  it('backend equivalents under /v1/users/:external_id/devices', async () => {
    const reg = await ws.api.post('/v1/users/bo/devices', { token: 'bo-tablet', platform: 'android' });
    expect(reg.status).toBe(201);
    expect(tokensOf(await ws.api.get('/v1/users/bo/devices'))).toEqual(['bo-tablet']);
    expect(tokensOf(await bo.api.get('/v1/me/devices'))).toEqual(['bo-tablet']);
    expect((await ws.api.delete('/v1/users/bo/devices/bo-tablet')).status).toBe(204);
    expect(tokensOf(await ws.api.get('/v1/users/bo/devices'))).toEqual([]);
    expectError(await ws.api.get('/v1/users/nobody/devices'), 404, 'NOT_FOUND');
    expectError(
      await ws.api.post('/v1/users/nobody/devices', { token: 'x', platform: 'ios' }),
      404,
      'NOT_FOUND',
    );
  });

  it('credentials: /me is for user tokens, /v1/users/... for the backend', async () => {
    expectError(await ws.api.post('/v1/me/devices', { token: 'x', platform: 'ios' }), 403, 'FORBIDDEN');
    expectError(await ana.api.get('/v1/users/ana/devices'), 403, 'FORBIDDEN');
    expectError(await t.http().get('/v1/me/devices'), 401, 'UNAUTHORIZED');
  });

  it('validates token (1-4096 printable characters) and platform', async () => {
    const long = 'a'.repeat(4096);
    expect((await ana.api.post('/v1/me/devices', { token: long, platform: 'web' })).status).toBe(201);
    expect(tokensOf(await ana.api.get('/v1/me/devices'))).toEqual([long]);
    expect((await ana.api.delete(`/v1/me/devices/${long}`)).status).toBe(204);
    for (const bad of [
      { token: 'a'.repeat(4097), platform: 'web' },
      { token: '', platform: 'web' },
      { token: 'has space', platform: 'web' },
      { token: 'new\nline', platform: 'web' },
      { token: 42, platform: 'web' },
      { token: 'ok', platform: 'windows' },
      { token: 'ok' },
      { token: 'ok', platform: 'ios', user_id: 'x' },
    ]) {
      expectError(await ana.api.post('/v1/me/devices', bad), 400, 'VALIDATION_ERROR');
    }
  });

  it('keeps the 50 most recently registered devices per user', async () => {
    for (let i = 0; i < 55; i++)
      await ws.api.post('/v1/users/ana/devices', {
        token: `t-${String(i).padStart(2, '0')}`,
        platform: 'android',
      });
    const list = tokensOf(await ana.api.get('/v1/me/devices'));
    expect(list).toHaveLength(50);
    expect(list[0]).toBe('t-05');
  });

  it('deleting the user removes their devices', async () => {
    await ana.api.post('/v1/me/devices', { token: 'ana-phone', platform: 'ios' });
    expect((await ws.api.delete('/v1/users/ana')).status).toBe(204);
    await ws.user('ana');
    expect(tokensOf(await ws.api.get('/v1/users/ana/devices'))).toEqual([]);
  });
});

describe('devices and attachments in the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('lists the routes with their methods', async () => {
    const doc = (await t.http().get('/docs-json')).body as { paths: Record<string, Record<string, unknown>> };
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods('/v1/me/devices')).toEqual(['get', 'post']);
    expect(methods('/v1/me/devices/{token}')).toEqual(['delete']);
    expect(methods('/v1/users/{external_id}/devices')).toEqual(['get', 'post']);
    expect(methods('/v1/users/{external_id}/devices/{token}')).toEqual(['delete']);
    expect(methods('/v1/attachments/presign')).toEqual(['post']);
    expect(methods('/v1/uploads/{key}')).toEqual(['put']);
    expect(methods('/files/{key}')).toEqual(['get']);
  });
});
