import type Redis from 'ioredis';
import { WorkspaceKeyCache } from '../../src/auth/workspace-key.cache';
import { WorkspaceChanges } from '../../src/workspaces/workspace-changes';
import { WorkspaceSettingsCache } from '../../src/workspaces/workspace-settings.cache';
import { startTwoInstances, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { admin, Client, newWorkspace, TestUser, TestWorkspace, userToken } from '../support/fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` holds; answers how long it took (ms), or fails after `withinMs`. */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await sleep(20);
  }
}

/**
 * Two instances on one PostgreSQL database and one Redis: a rotation, a deletion or a settings change
 * made through one instance reaches the other's caches through Redis pub/sub, well before the TTL; with
 * pub/sub gone the TTL still bounds how long the other instance trusts what it cached.
 */
describe('key and settings caches across two instances (PostgreSQL + Redis)', () => {
  let one: TestApp;
  let two: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ one, two, close } = await startTwoInstances('ac'));
  });
  afterAll(async () => {
    await close();
  });

  const on = (t: TestApp, authorization: string) => new Client(t, authorization);
  const pairOf = (key: string, secret: string) => `Bearer ${key}:${secret}`;
  const status = async (t: TestApp, authorization: string) =>
    (await on(t, authorization).get('/v1/workspace')).status;

  /** A workspace whose key pair and a user JWT are cached on instance two. */
  async function warmOnTwo(): Promise<{ ws: TestWorkspace; pair: string; jwt: string }> {
    const ws = await newWorkspace(one);
    await ws.user('ana');
    const pair = pairOf(ws.apiKey, ws.apiSecret);
    const jwt = `Bearer ${userToken(ws.apiKey, ws.apiSecret, 'ana')}`;
    expect(await status(two, pair)).toBe(200);
    expect(await status(two, jwt)).toBe(403); // accepted, wrong kind for this route
    return { ws, pair, jwt };
  }

  it('a rotation with grace 0 on one instance stops the old pair and old JWTs on the other promptly', async () => {
    const { ws, pair, jwt } = await warmOnTwo();
    const rotated = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 0 });
    expect(rotated.status).toBe(200);
    const ms = await within(2000, async () => (await status(two, pair)) === 401);
    expect(ms).toBeLessThan(1000);
    expectError(await on(two, jwt).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    expect(await status(two, pairOf(rotated.body.api_key, rotated.body.api_secret))).toBe(200);
    expect(
      await status(two, `Bearer ${userToken(rotated.body.api_key, rotated.body.api_secret, 'ana')}`),
    ).toBe(403);
  });

  it('a rotation with a grace period: the other instance keeps the old pair for the grace period, then stops', async () => {
    const { ws, pair, jwt } = await warmOnTwo();
    const rotated = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 2 });
    const at = Date.now();
    expect(rotated.status).toBe(200);
    await sleep(200); // the invalidation has arrived; what two caches now is the key with its end of grace
    expect(await status(two, pair)).toBe(200);
    expect(await status(two, jwt)).toBe(403);
    expect(await status(two, pairOf(rotated.body.api_key, rotated.body.api_secret))).toBe(200);
    await within(3000, async () => (await status(two, pair)) === 401);
    expect(Date.now() - at).toBeGreaterThanOrEqual(1900);
    expect(await status(two, jwt)).toBe(401);
    expect(await status(one, pair)).toBe(401);
  });

  it('a workspace deleted through one instance stops on the other promptly', async () => {
    const { ws, pair, jwt } = await warmOnTwo();
    expect((await two.app.get(WorkspaceSettingsCache).get(ws.id)).read_receipts_enabled).toBe(true);
    expect((await admin(one).delete(`/v1/admin/workspaces/${ws.id}`)).status).toBe(204);
    const ms = await within(2000, async () => (await status(two, pair)) === 401);
    expect(ms).toBeLessThan(1000);
    expect(await status(two, jwt)).toBe(401);
    await expect(two.app.get(WorkspaceSettingsCache).get(ws.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it("a user deleted through one instance: their cached token stops on both at once, others' keep working", async () => {
    const { ws, jwt } = await warmOnTwo();
    await ws.user('bo');
    const bo = `Bearer ${userToken(ws.apiKey, ws.apiSecret, 'bo')}`;
    expect((await on(two, bo).get('/v1/me/channels')).status).toBe(200);
    expect((await on(two, jwt).get('/v1/me/channels')).status).toBe(200);
    expect((await ws.api.delete('/v1/users/ana')).status).toBe(204);
    expectError(await on(one, jwt).get('/v1/me/channels'), 401, 'UNAUTHORIZED');
    const ms = await within(2000, async () => (await on(two, jwt).get('/v1/me/channels')).status === 401);
    expect(ms).toBeLessThan(1000);
    expect((await on(two, bo).get('/v1/me/channels')).status).toBe(200);
  });

  it('a settings change made on one instance is seen by the other promptly', async () => {
    const ws = await newWorkspace(one);
    const [ana] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    const ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'g-settings',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const onTwo = on(two, ana.api.authorization!);
    // moderation is off: a link goes through, and instance two now caches the settings
    expect(
      (await onTwo.post(`/v1/channels/${ch.id}/messages`, { content: 'see https://example.org' })).status,
    ).toBe(201);
    const cache = two.app.get(WorkspaceSettingsCache);
    expect((await cache.get(ws.id)).moderation.enabled).toBe(false);

    const patched = await ws.api.patch('/v1/workspace/settings', {
      read_receipts_enabled: false,
      moderation: { enabled: true, action: 'reject', rules: ['link'] },
    });
    expect(patched.status).toBe(200);
    const ms = await within(2000, async () => !(await cache.get(ws.id)).read_receipts_enabled);
    expect(ms).toBeLessThan(1000);
    expect((await cache.get(ws.id)).moderation).toMatchObject({
      enabled: true,
      action: 'reject',
      rules: ['link'],
    });
    expectError(
      await onTwo.post(`/v1/channels/${ch.id}/messages`, { content: 'see https://example.org' }),
      422,
      'MESSAGE_REJECTED',
    );
  });

  describe('with Redis pub/sub gone', () => {
    const sub = (t: TestApp): Redis => t.app.get<WorkspaceChanges, { sub: Redis }>(WorkspaceChanges).sub;
    const channel = () => `${process.env.SERVICE_REDIS_PREFIX}workspaces:changed`;
    afterEach(async () => {
      two.app.get(WorkspaceKeyCache).ttlMs = 30_000;
      two.app.get(WorkspaceSettingsCache).ttlMs = 30_000;
      await sub(two).subscribe(channel());
    });

    it('the other instance stops trusting what it cached within the TTL', async () => {
      two.app.get(WorkspaceKeyCache).ttlMs = 1500;
      two.app.get(WorkspaceSettingsCache).ttlMs = 1500;
      await sub(two).unsubscribe(channel());
      const { ws, pair, jwt } = await warmOnTwo();
      const cache = two.app.get(WorkspaceSettingsCache);
      expect((await cache.get(ws.id)).read_receipts_enabled).toBe(true);
      const at = Date.now();
      expect((await ws.api.patch('/v1/workspace/settings', { read_receipts_enabled: false })).status).toBe(
        200,
      );
      expect((await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 0 })).status).toBe(200);

      await sleep(300);
      expect(await status(two, pair)).toBe(200); // not told: still trusted from the cache…
      expect((await cache.get(ws.id)).read_receipts_enabled).toBe(true);
      await within(2500, async () => (await status(two, pair)) === 401); // …until the TTL runs out
      expect(await status(two, jwt)).toBe(401);
      // the settings were cached a moment after the key (on a busy machine, a long moment): each entry
      // lives out its own TTL
      await within(2500, async () => (await cache.get(ws.id)).read_receipts_enabled === false);
      expect(Date.now() - at).toBeLessThan(2500);
    });

    it('after the subscriber reconnects, everything cached before is dropped (messages may have been lost)', async () => {
      const { ws, pair } = await warmOnTwo();
      const s = sub(two);
      s.disconnect(); // the connection drops: what is published now, two never hears
      expect((await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 0 })).status).toBe(200);
      await sleep(200);
      expect(await status(two, pair)).toBe(200);
      await s.connect();
      const ms = await within(2000, async () => (await status(two, pair)) === 401);
      expect(ms).toBeLessThan(1000);
    });
  });
});
