import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Client, newWorkspace } from '../support/fixtures';
import { decodeJwt } from '../support/jwt';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** CONTRACT §5 (users) and §3 (the token endpoint). */
describe('users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  describe('PUT /v1/users/:external_id', () => {
    it('creates (201) then updates (200), keeping omitted fields', async () => {
      const ws = await newWorkspace(t);
      const created = await ws.api.put('/v1/users/ana', {
        name: 'Ana',
        avatar_url: 'https://cdn.example.com/ana.png',
        metadata: { plan: 'pro' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(UUID7),
        external_id: 'ana',
        name: 'Ana',
        avatar_url: 'https://cdn.example.com/ana.png',
        metadata: { plan: 'pro' },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });

      const updated = await ws.api.put('/v1/users/ana', { name: 'Ana María' });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        id: created.body.id,
        name: 'Ana María',
        avatar_url: 'https://cdn.example.com/ana.png',
        metadata: { plan: 'pro' },
        created_at: created.body.created_at,
      });
      expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));

      const empty = await ws.api.put('/v1/users/bo');
      expect(empty.status).toBe(201);
      expect(empty.body).toMatchObject({ external_id: 'bo', name: null, avatar_url: null, metadata: {} });
    });

    it('accepts unicode and punctuation in external ids', async () => {
      const ws = await newWorkspace(t);
      for (const id of ['user@example.com', 'ünïcødé-用户', 'a.b_c-d:e', 'x'.repeat(128)]) {
        const res = await ws.api.put(`/v1/users/${encodeURIComponent(id)}`, {});
        expect(res.status).toBe(201);
        expect(res.body.external_id).toBe(id);
        expect((await ws.api.get(`/v1/users/${encodeURIComponent(id)}`)).body.id).toBe(res.body.id);
      }
    });

    it.each([
      ['an unknown field', { name: 'Ana', role: 'admin' }],
      ['a non-string name', { name: 42 }],
      ['a non-URL avatar', { avatar_url: 'not a url' }],
      ['a javascript: avatar', { avatar_url: 'javascript:alert(1)' }],
      ['an array as metadata', { metadata: [1, 2] }],
      ['a string as metadata', { metadata: 'x' }],
      ['metadata over 4 KiB', { metadata: { blob: 'x'.repeat(4096) } }],
    ])('refuses %s with 400 VALIDATION_ERROR', async (_name, body) => {
      const ws = await newWorkspace(t);
      expectError(await ws.api.put('/v1/users/ana', body), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/users/ana'), 404, 'NOT_FOUND');
    });

    it('accepts metadata of exactly 4 KiB of JSON, and counts UTF-8 bytes', async () => {
      const ws = await newWorkspace(t);
      const pad = 4096 - JSON.stringify({ blob: '' }).length;
      expect((await ws.api.put('/v1/users/ana', { metadata: { blob: 'x'.repeat(pad) } })).status).toBe(201);
      expectError(
        await ws.api.put('/v1/users/bo', { metadata: { blob: 'x'.repeat(pad + 1) } }),
        400,
        'VALIDATION_ERROR',
      );
      // 'é' is 2 bytes: fewer characters than the limit, more bytes
      expectError(
        await ws.api.put('/v1/users/cy', { metadata: { blob: 'é'.repeat(pad / 2 + 1) } }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('refuses a bad external id in the path', async () => {
      const ws = await newWorkspace(t);
      for (const id of ['a%20b', 'x'.repeat(129), 'a%2Fb']) {
        expectError(await ws.api.put(`/v1/users/${id}`, {}), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('POST /v1/users (batch)', () => {
    it('upserts 1-100 users and answers 200 {users} in request order', async () => {
      const ws = await newWorkspace(t);
      await ws.api.put('/v1/users/u050', { name: 'Old' });
      const users = Array.from({ length: 100 }, (_, i) => ({
        external_id: `u${String(i).padStart(3, '0')}`,
        name: `User ${i}`,
      }));
      users.reverse();
      const res = await ws.api.post('/v1/users', { users });
      expect(res.status).toBe(200);
      expect(res.body.users).toHaveLength(100);
      expect(res.body.users.map((u: { external_id: string }) => u.external_id)).toEqual(
        users.map((u) => u.external_id),
      );
      expect(res.body.users[0]).toEqual({
        id: expect.stringMatching(UUID7),
        external_id: 'u099',
        name: 'User 99',
        avatar_url: null,
        metadata: {},
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect((await ws.api.get('/v1/users/u050')).body.name).toBe('User 50');

      const one = await ws.api.post('/v1/users', { users: [{ external_id: 'solo', metadata: { a: 1 } }] });
      expect(one.status).toBe(200);
      expect(one.body.users[0]).toMatchObject({ external_id: 'solo', metadata: { a: 1 } });
    });

    it.each([
      ['an empty list', { users: [] }],
      ['101 users', { users: Array.from({ length: 101 }, (_, i) => ({ external_id: `u${i}` })) }],
      [
        'a duplicate external id',
        { users: [{ external_id: 'a' }, { external_id: 'b' }, { external_id: 'a' }] },
      ],
      ['a missing external id', { users: [{ name: 'x' }] }],
      ['a bad external id', { users: [{ external_id: 'has space' }] }],
      ['an unknown field in a user', { users: [{ external_id: 'a', admin: true }] }],
      ['an unknown top-level field', { users: [{ external_id: 'a' }], upsert: true }],
      ['oversized metadata', { users: [{ external_id: 'a', metadata: { x: 'y'.repeat(5000) } }] }],
      ['users not an array', { users: { external_id: 'a' } }],
      ['no body', undefined],
    ])('refuses %s with 400 and writes nothing', async (_name, body) => {
      const ws = await newWorkspace(t);
      expectError(await ws.api.req('post', '/v1/users', body), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/users/a'), 404, 'NOT_FOUND');
      expectError(await ws.api.get('/v1/users/b'), 404, 'NOT_FOUND');
    });

    it('names the duplicate in details', async () => {
      const ws = await newWorkspace(t);
      const res = await ws.api.post('/v1/users', { users: [{ external_id: 'a' }, { external_id: 'a' }] });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([
        { field: 'users[1].external_id', message: expect.any(String) },
      ]);
    });
  });

  describe('GET and DELETE', () => {
    it('gets a user; an unknown one is 404', async () => {
      const ws = await newWorkspace(t);
      const put = await ws.api.put('/v1/users/ana', { name: 'Ana' });
      const res = await ws.api.get('/v1/users/ana');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(put.body);
      expectError(await ws.api.get('/v1/users/nobody'), 404, 'NOT_FOUND');
    });

    it('deletes a user (204); then GET and a second DELETE are 404; the id can be reused', async () => {
      const ws = await newWorkspace(t);
      const first = await ws.api.put('/v1/users/ana', { name: 'Ana' });
      const del = await ws.api.delete('/v1/users/ana');
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expectError(await ws.api.get('/v1/users/ana'), 404, 'NOT_FOUND');
      expectError(await ws.api.delete('/v1/users/ana'), 404, 'NOT_FOUND');
      expectError(await ws.api.delete('/v1/users/never-existed'), 404, 'NOT_FOUND');
      const again = await ws.api.put('/v1/users/ana', {});
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(first.body.id);
    });
  });

  describe('POST /v1/users/:external_id/token', () => {
    it('issues an HS256 token: kid = api key, sub/iat/exp, default ttl 3600, expires_at', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      const before = Math.floor(Date.now() / 1000);
      const res = await ws.api.post('/v1/users/ana/token', {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: expect.any(String), expires_at: expect.stringMatching(ISO) });
      const { header, payload } = decodeJwt(res.body.token);
      expect(header).toMatchObject({ alg: 'HS256', kid: ws.apiKey });
      expect(payload.sub).toBe('ana');
      const iat = payload.iat as number;
      const exp = payload.exp as number;
      expect(iat).toBeGreaterThanOrEqual(before - 1);
      expect(iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
      expect(exp - iat).toBe(3600);
      expect(res.body.expires_at).toBe(new Date(exp * 1000).toISOString());
      // it authenticates: a user token on a backend route is 403, not 401
      expectError(await new Client(t, `Bearer ${res.body.token}`).get('/v1/workspace'), 403, 'FORBIDDEN');
    });

    it('accepts ttl_seconds 60 and 86400', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      for (const ttl of [60, 86_400]) {
        const res = await ws.api.post('/v1/users/ana/token', { ttl_seconds: ttl });
        expect(res.status).toBe(200);
        const { payload } = decodeJwt(res.body.token);
        expect((payload.exp as number) - (payload.iat as number)).toBe(ttl);
        expectError(await new Client(t, `Bearer ${res.body.token}`).get('/v1/workspace'), 403, 'FORBIDDEN');
      }
    });

    it.each([[59], [86_401], [0], [-5], [90.5], ['3600'], [null]])(
      'refuses ttl_seconds %p with 400',
      async (ttl) => {
        const ws = await newWorkspace(t);
        await ws.user('ana');
        expectError(await ws.api.post('/v1/users/ana/token', { ttl_seconds: ttl }), 400, 'VALIDATION_ERROR');
      },
    );

    it('refuses unknown fields and answers 404 for an unknown user', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      expectError(await ws.api.post('/v1/users/ana/token', { ttl: 60 }), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.post('/v1/users/ghost/token', {}), 404, 'NOT_FOUND');
    });
  });

  describe('the user.created event', () => {
    const eventsOf = async (workspaceId: string) => {
      const rows: {
        type: string;
        payload: { user: { external_id: string; id: string } };
        channel_id: string | null;
      }[] = await t.app
        .get(DataSource)
        .query('SELECT type, payload, channel_id FROM events WHERE workspace_id = $1 ORDER BY position', [
          workspaceId,
        ]);
      return rows;
    };

    it('is written exactly once per new user (single and batch), never on update', async () => {
      const ws = await newWorkspace(t);
      const ana = await ws.api.put('/v1/users/ana', { name: 'Ana' });
      await ws.api.put('/v1/users/ana', { name: 'Ana 2' });
      await ws.api.put('/v1/users/ana', {});
      await ws.api.post('/v1/users', {
        users: [{ external_id: 'ana' }, { external_id: 'bo' }, { external_id: 'cy' }],
      });
      await ws.api.post('/v1/users', { users: [{ external_id: 'bo' }, { external_id: 'cy' }] });
      // a refused batch writes no events
      await ws.api.post('/v1/users', { users: [{ external_id: 'dee' }, { external_id: 'dee' }] });

      const events = await eventsOf(ws.id);
      expect(events.every((e) => e.type === 'user.created' && e.channel_id === null)).toBe(true);
      expect(events.map((e) => e.payload.user.external_id).sort()).toEqual(['ana', 'bo', 'cy']);
      const anaEvent = events.find((e) => e.payload.user.external_id === 'ana')!;
      expect(anaEvent.payload.user).toMatchObject({ id: ana.body.id, name: 'Ana', external_id: 'ana' });
    });

    it('fires again for a user re-created after a delete', async () => {
      const ws = await newWorkspace(t);
      await ws.api.put('/v1/users/ana', {});
      await ws.api.delete('/v1/users/ana');
      await ws.api.put('/v1/users/ana', {});
      expect((await eventsOf(ws.id)).map((e) => e.type)).toEqual(['user.created', 'user.created']);
    });

    it('is written once when the same new user is created concurrently', async () => {
      const ws = await newWorkspace(t);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => ws.api.put('/v1/users/racer', { name: 'R' })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(await eventsOf(ws.id)).toHaveLength(1);
    });
  });

  describe('cross-tenant isolation', () => {
    it("workspace B never sees, changes, deletes or issues tokens for A's users", async () => {
      const a = await newWorkspace(t);
      const b = await newWorkspace(t);
      const ana = await a.api.put('/v1/users/ana', { name: 'Ana', metadata: { secret: 'a-only' } });

      expectError(await b.api.get('/v1/users/ana'), 404, 'NOT_FOUND');
      expectError(await b.api.delete('/v1/users/ana'), 404, 'NOT_FOUND');
      expectError(await b.api.post('/v1/users/ana/token', {}), 404, 'NOT_FOUND');

      // B's own "ana" is a different user; A's stays as it was
      const bAna = await b.api.put('/v1/users/ana', { name: 'Other Ana' });
      expect(bAna.status).toBe(201);
      expect(bAna.body.id).not.toBe(ana.body.id);
      expect(bAna.body.metadata).toEqual({});
      const batch = await b.api.post('/v1/users', { users: [{ external_id: 'ana', name: 'Batch Ana' }] });
      expect(batch.body.users[0].id).toBe(bAna.body.id);

      const aView = await a.api.get('/v1/users/ana');
      expect(aView.status).toBe(200);
      expect(aView.body).toMatchObject({ id: ana.body.id, name: 'Ana', metadata: { secret: 'a-only' } });

      expect((await b.api.delete('/v1/users/ana')).status).toBe(204);
      expect((await a.api.get('/v1/users/ana')).status).toBe(200);
    });
  });
});
