import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Client, newWorkspace, userToken } from '../support/fixtures';

const DEFAULTS = {
  read_receipts_enabled: true,
  system_messages_for_membership: false,
  large_channel_threshold: 100,
  moderation: {
    enabled: false,
    rules: ['profanity', 'link', 'phone', 'flood'],
    action: 'flag',
    blocklist: [],
    flood: { max_repeats: 3, window_seconds: 30 },
    auto_mute: { enabled: false, violations: 3, window_seconds: 3600, duration_seconds: 900 },
  },
  link_previews_enabled: true,
  pre_send_hook: null,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CONTRACT §3 (rotation) and §4 (GET /v1/workspace, PATCH /v1/workspace/settings). */
describe('workspace settings and secret rotation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  describe('GET /v1/workspace and PATCH /v1/workspace/settings', () => {
    it('shows {id, name, api_key, settings, created_at} with the default settings', async () => {
      const ws = await newWorkspace(t, 'Defaults');
      const res = await ws.api.get('/v1/workspace');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: ws.id,
        name: 'Defaults',
        api_key: ws.apiKey,
        settings: DEFAULTS,
        created_at: expect.any(String),
      });
    });

    it('deep-merges a partial body and answers the whole settings object', async () => {
      const ws = await newWorkspace(t);
      const one = await ws.api.patch('/v1/workspace/settings', { moderation: { action: 'mask' } });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ ...DEFAULTS, moderation: { ...DEFAULTS.moderation, action: 'mask' } });

      const two = await ws.api.patch('/v1/workspace/settings', {
        read_receipts_enabled: false,
        moderation: {
          flood: { max_repeats: 5 },
          auto_mute: { enabled: true },
          blocklist: ['darn'],
          rules: ['link'],
        },
      });
      expect(two.status).toBe(200);
      const expected = {
        ...DEFAULTS,
        read_receipts_enabled: false,
        moderation: {
          ...DEFAULTS.moderation,
          action: 'mask',
          rules: ['link'],
          blocklist: ['darn'],
          flood: { max_repeats: 5, window_seconds: 30 },
          auto_mute: { ...DEFAULTS.moderation.auto_mute, enabled: true },
        },
      };
      expect(two.body).toEqual(expected);

      // arrays replace, they do not append
      const three = await ws.api.patch('/v1/workspace/settings', { moderation: { blocklist: [] } });
      expect(three.body.moderation.blocklist).toEqual([]);
      expect(three.body.moderation.rules).toEqual(['link']);

      const empty = await ws.api.patch('/v1/workspace/settings', {});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ ...expected, moderation: { ...expected.moderation, blocklist: [] } });
      expect((await ws.api.get('/v1/workspace')).body.settings).toEqual(empty.body);
    });

    it.each([
      ['a wrong type', { read_receipts_enabled: 'yes' }],
      ['a wrong nested type', { moderation: { enabled: 1 } }],
      ['moderation not an object', { moderation: 'on' }],
      ['an unknown field', { colour: 'blue' }],
      ['an unknown nested field', { moderation: { strictness: 3 } }],
      ['an unknown deeply nested field', { moderation: { flood: { burst: 2 } } }],
      ['an unknown moderation action', { moderation: { action: 'ban' } }],
      ['an unknown rule', { moderation: { rules: ['profanity', 'spam'] } }],
      ['a large-channel threshold below 2', { large_channel_threshold: 1 }],
      ['a large-channel threshold above 100,000', { large_channel_threshold: 100_001 }],
      ['a fractional large-channel threshold', { large_channel_threshold: 2.5 }],
      ['a non-integer flood limit', { moderation: { flood: { max_repeats: 1.5 } } }],
      ['a zero window', { moderation: { auto_mute: { window_seconds: 0 } } }],
      ['a non-string blocklist entry', { moderation: { blocklist: [3] } }],
      ['a null setting', { read_receipts_enabled: null }],
      ['a null moderation object', { moderation: null }],
      ['a null nested setting', { moderation: { flood: { max_repeats: null } } }],
    ])('refuses %s with 400 VALIDATION_ERROR and keeps the settings', async (_name, body) => {
      const ws = await newWorkspace(t);
      expectError(await ws.api.patch('/v1/workspace/settings', body), 400, 'VALIDATION_ERROR');
      expect((await ws.api.get('/v1/workspace')).body.settings).toEqual(DEFAULTS);
    });

    it('names the offending field in details', async () => {
      const ws = await newWorkspace(t);
      const res = await ws.api.patch('/v1/workspace/settings', { moderation: { action: 'ban' } });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'moderation.action' })]),
      );
    });

    it('keeps settings per workspace', async () => {
      const a = await newWorkspace(t);
      const b = await newWorkspace(t);
      await a.api.patch('/v1/workspace/settings', {
        system_messages_for_membership: true,
        moderation: { enabled: true },
      });
      expect((await b.api.get('/v1/workspace')).body.settings).toEqual(DEFAULTS);
      expect((await b.api.get('/v1/workspace')).body.id).toBe(b.id);
      const aSettings = (await a.api.get('/v1/workspace')).body.settings;
      expect(aSettings.system_messages_for_membership).toBe(true);
      expect(aSettings.moderation.enabled).toBe(true);
    });
  });

  describe('POST /v1/workspace/rotate-secret', () => {
    it('grace 0: a new pair (both values change); the old pair and old JWTs get 401 at once', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      const oldJwt = userToken(ws.apiKey, ws.apiSecret, 'ana');
      expectError(await new Client(t, `Bearer ${oldJwt}`).get('/v1/workspace'), 403, 'FORBIDDEN');

      const res = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 0 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        api_key: expect.stringMatching(/^pk_/),
        api_secret: expect.stringMatching(/^sk_/),
      });
      expect(res.body.api_key).not.toBe(ws.apiKey);
      expect(res.body.api_secret).not.toBe(ws.apiSecret);

      expectError(await ws.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');
      expectError(await t.http().get('/v1/workspace').auth(ws.apiKey, ws.apiSecret), 401, 'UNAUTHORIZED');
      expectError(await new Client(t, `Bearer ${oldJwt}`).get('/v1/workspace'), 401, 'UNAUTHORIZED');

      const fresh = new Client(t, `Bearer ${res.body.api_key}:${res.body.api_secret}`);
      const ws2 = await fresh.get('/v1/workspace');
      expect(ws2.status).toBe(200);
      expect(ws2.body.api_key).toBe(res.body.api_key);
      const newJwt = userToken(res.body.api_key, res.body.api_secret, 'ana');
      expectError(await new Client(t, `Bearer ${newJwt}`).get('/v1/workspace'), 403, 'FORBIDDEN');
      // the old secret cannot sign for the new kid either
      expectError(
        await new Client(t, `Bearer ${userToken(res.body.api_key, ws.apiSecret, 'ana')}`).get(
          '/v1/workspace',
        ),
        401,
        'UNAUTHORIZED',
      );
      // issued tokens carry the new kid
      const issued = await fresh.post('/v1/users/ana/token', {});
      expectError(await new Client(t, `Bearer ${issued.body.token}`).get('/v1/workspace'), 403, 'FORBIDDEN');
    });

    it('defaults to grace 0', async () => {
      const ws = await newWorkspace(t);
      const res = await ws.api.post('/v1/workspace/rotate-secret');
      expect(res.status).toBe(200);
      expectError(await ws.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');
    });

    it('grace 600: the old pair and old-secret JWTs keep working, next to the new pair', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      const oldJwt = userToken(ws.apiKey, ws.apiSecret, 'ana');
      const res = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 600 });
      expect(res.status).toBe(200);

      expect((await ws.api.get('/v1/workspace')).status).toBe(200);
      expect((await t.http().get('/v1/workspace').auth(ws.apiKey, ws.apiSecret)).status).toBe(200);
      expectError(await new Client(t, `Bearer ${oldJwt}`).get('/v1/workspace'), 403, 'FORBIDDEN');
      expect((await ws.api.put('/v1/users/bo', {})).status).toBe(201);

      const fresh = new Client(t, `Bearer ${res.body.api_key}:${res.body.api_secret}`);
      const cur = await fresh.get('/v1/workspace');
      expect(cur.status).toBe(200);
      expect(cur.body.api_key).toBe(res.body.api_key);
      expectError(
        await new Client(t, `Bearer ${userToken(res.body.api_key, res.body.api_secret, 'bo')}`).get(
          '/v1/workspace',
        ),
        403,
        'FORBIDDEN',
      );
    });

    it('a short grace period runs out', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      const oldJwt = userToken(ws.apiKey, ws.apiSecret, 'ana');
      expect((await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 1 })).status).toBe(200);
      expect((await ws.api.get('/v1/workspace')).status).toBe(200);
      await sleep(1300);
      expectError(await ws.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');
      expectError(await new Client(t, `Bearer ${oldJwt}`).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    });

    it('a second rotation shortens the first grace period, never extends it', async () => {
      const ws = await newWorkspace(t);
      const first = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 600 });
      const second = await new Client(t, `Bearer ${first.body.api_key}:${first.body.api_secret}`).post(
        '/v1/workspace/rotate-secret',
        {
          grace_seconds: 0,
        },
      );
      expect(second.status).toBe(200);
      expectError(await ws.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');
      expectError(
        await new Client(t, `Bearer ${first.body.api_key}:${first.body.api_secret}`).get('/v1/workspace'),
        401,
        'UNAUTHORIZED',
      );
      expect(
        (await new Client(t, `Bearer ${second.body.api_key}:${second.body.api_secret}`).get('/v1/workspace'))
          .status,
      ).toBe(200);
    });

    it.each([[-1], [86_401], ['60'], [1.5], [null]])('refuses grace_seconds %p with 400', async (grace) => {
      const ws = await newWorkspace(t);
      expectError(
        await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: grace }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await ws.api.get('/v1/workspace')).status).toBe(200);
    });

    it('refuses unknown fields', async () => {
      const ws = await newWorkspace(t);
      expectError(await ws.api.post('/v1/workspace/rotate-secret', { grace: 10 }), 400, 'VALIDATION_ERROR');
    });
  });
});
