import { DataSource } from 'typeorm';
import { WorkspaceKeyCache } from '../../src/auth/workspace-key.cache';
import { WorkspaceSettingsCache } from '../../src/workspaces/workspace-settings.cache';
import { WorkspacesRepository } from '../../src/workspaces/workspaces.repository';
import { WorkspacesService } from '../../src/workspaces/workspaces.service';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { admin, Client, newWorkspace, TestWorkspace, userToken } from '../support/fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The key and settings caches on one instance: a change made through the API applies at once, a change
 * nobody announced (another process, a lost Redis message) within the TTL, and a read in flight when a
 * change lands is not cached.
 */
describe('key and settings caches (one instance)', () => {
  let t: TestApp;
  let keys: WorkspaceKeyCache;
  let settings: WorkspaceSettingsCache;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp();
    keys = t.app.get(WorkspaceKeyCache);
    settings = t.app.get(WorkspaceSettingsCache);
    db = t.app.get(DataSource);
  });
  afterAll(async () => t.close());
  afterEach(() => {
    jest.restoreAllMocks();
    keys.ttlMs = 30_000;
    settings.ttlMs = 30_000;
  });

  const pair = (ws: TestWorkspace) => new Client(t, `Bearer ${ws.apiKey}:${ws.apiSecret}`);
  const jwt = (ws: TestWorkspace, sub = 'ana') =>
    new Client(t, `Bearer ${userToken(ws.apiKey, ws.apiSecret, sub)}`);

  it('serves repeated key-pair and JWT requests without looking the key up again', async () => {
    const ws = await newWorkspace(t);
    await ws.user('ana');
    const repo = t.app.get(WorkspacesRepository);
    const lookups = jest.spyOn(repo, 'findActiveKey');
    for (let i = 0; i < 5; i++) {
      expect((await pair(ws).get('/v1/workspace')).status).toBe(200);
      expectError(await jwt(ws).get('/v1/workspace'), 403, 'FORBIDDEN');
    }
    expect(lookups).toHaveBeenCalledTimes(0); // newWorkspace's requests already cached it
    keys.forget(ws.id);
    expect((await pair(ws).get('/v1/workspace')).status).toBe(200);
    expectError(await jwt(ws).get('/v1/workspace'), 403, 'FORBIDDEN');
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it('a deleted workspace: its key pair and user tokens stop at once', async () => {
    const ws = await newWorkspace(t);
    await ws.user('ana');
    expect((await pair(ws).get('/v1/workspace')).status).toBe(200);
    expectError(await jwt(ws).get('/v1/workspace'), 403, 'FORBIDDEN');
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(true);

    expect((await admin(t).delete(`/v1/admin/workspaces/${ws.id}`)).status).toBe(204);
    expectError(await pair(ws).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    expectError(await jwt(ws).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    await expect(settings.get(ws.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a settings change is seen at once by the cached readers', async () => {
    const ws = await newWorkspace(t);
    const service = t.app.get(WorkspacesService);
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(true);
    expect((await service.settings(ws.id)).moderation.enabled).toBe(false);

    const res = await ws.api.patch('/v1/workspace/settings', {
      read_receipts_enabled: false,
      moderation: { enabled: true },
    });
    expect(res.status).toBe(200);
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(false);
    expect((await service.settings(ws.id)).moderation.enabled).toBe(true);
  });

  it('hands out frozen settings, so no reader can change what the others see', async () => {
    const ws = await newWorkspace(t);
    const s = await settings.get(ws.id);
    expect(Object.isFrozen(s) && Object.isFrozen(s.moderation) && Object.isFrozen(s.moderation.rules)).toBe(
      true,
    );
    expect(() => s.moderation.rules.push('flood')).toThrow(TypeError);
    expect(await settings.get(ws.id)).toBe(s);
  });

  it('inside a transaction a miss reads through it and is not cached', async () => {
    const ws = await newWorkspace(t);
    settings.forget(ws.id);
    const repo = t.app.get(WorkspacesRepository);
    const reads = jest.spyOn(repo, 'findSettings');
    const inside = await db.transaction((m) => settings.get(ws.id, m));
    expect(inside.read_receipts_enabled).toBe(true);
    expect(reads).toHaveBeenCalledTimes(1);
    await settings.get(ws.id);
    await settings.get(ws.id);
    expect(reads).toHaveBeenCalledTimes(2);
    // a hit inside a transaction costs nothing
    await db.transaction((m) => settings.get(ws.id, m));
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('a read in flight when a change lands is not cached', async () => {
    const ws = await newWorkspace(t);
    keys.forget(ws.id);
    settings.forget(ws.id);
    const repo = t.app.get(WorkspacesRepository);
    const keyReads = jest.spyOn(repo, 'findActiveKey');
    const settingsReads = jest.spyOn(repo, 'findSettings');

    const key = keys.active(ws.apiKey);
    const s = settings.get(ws.id);
    keys.forget(ws.id);
    settings.forget(ws.id);
    expect((await key)?.workspaceId).toBe(ws.id);
    expect((await s).read_receipts_enabled).toBe(true);

    await keys.active(ws.apiKey);
    await settings.get(ws.id);
    expect(keyReads).toHaveBeenCalledTimes(2);
    expect(settingsReads).toHaveBeenCalledTimes(2);
    await keys.active(ws.apiKey);
    await settings.get(ws.id);
    expect(keyReads).toHaveBeenCalledTimes(2);
    expect(settingsReads).toHaveBeenCalledTimes(2);
  });

  it('concurrent misses share one query', async () => {
    const ws = await newWorkspace(t);
    keys.forget(ws.id);
    settings.forget(ws.id);
    const repo = t.app.get(WorkspacesRepository);
    const keyReads = jest.spyOn(repo, 'findActiveKey');
    const settingsReads = jest.spyOn(repo, 'findSettings');
    await Promise.all([...Array(10).keys()].map(() => keys.active(ws.apiKey)));
    await Promise.all([...Array(10).keys()].map(() => settings.get(ws.id)));
    expect(keyReads).toHaveBeenCalledTimes(1);
    expect(settingsReads).toHaveBeenCalledTimes(1);
  });

  it('a change nobody announced (another process, a lost message) applies within the TTL', async () => {
    keys.ttlMs = 2000;
    settings.ttlMs = 2000;
    const ws = await newWorkspace(t);
    await ws.user('ana');
    keys.forget(ws.id); // fetched again below, with the short TTL
    settings.forget(ws.id);
    const at = Date.now();
    expect((await pair(ws).get('/v1/workspace')).status).toBe(200);
    expectError(await jwt(ws).get('/v1/workspace'), 403, 'FORBIDDEN');
    const lastFetch = Date.now();
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(true);

    // behind the service's back: what `chat-service workspace delete` or a lost pub/sub message looks like
    await db.query(
      `UPDATE workspace_keys SET expires_at = now() - interval '1 second' WHERE workspace_id = $1`,
      [ws.id],
    );
    await db.query(`UPDATE workspaces SET settings = '{"read_receipts_enabled": false}' WHERE id = $1`, [
      ws.id,
    ]);
    expect((await pair(ws).get('/v1/workspace')).status).toBe(200); // still cached
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(true);
    expect(Date.now() - at).toBeLessThan(2000); // (else this proves nothing)

    await sleep(lastFetch + 2050 - Date.now());
    expectError(await pair(ws).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    expectError(await jwt(ws).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    expect((await settings.get(ws.id)).read_receipts_enabled).toBe(false);
  });

  it('issues user tokens and signs with the current key after a rotation', async () => {
    const ws = await newWorkspace(t);
    await ws.user('ana');
    const before = await ws.api.post('/v1/users/ana/token', {});
    expect(before.status).toBe(200);
    const rotated = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 60 });
    const fresh = new Client(t, `Bearer ${rotated.body.api_key}:${rotated.body.api_secret}`);
    const after = await fresh.post('/v1/users/ana/token', {});
    const kid = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid;
    expect(kid(before.body.token)).toBe(ws.apiKey);
    expect(kid(after.body.token)).toBe(rotated.body.api_key);
    expect((await keys.currentKey(ws.id))?.apiKey).toBe(rotated.body.api_key);
    expectError(await new Client(t, `Bearer ${after.body.token}`).get('/v1/workspace'), 403, 'FORBIDDEN');
    expectError(await new Client(t, `Bearer ${before.body.token}`).get('/v1/workspace'), 403, 'FORBIDDEN'); // in grace
  });
});
