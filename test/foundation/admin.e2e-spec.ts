import { createHash } from 'crypto';
import { DataSource } from 'typeorm';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { WorkspacesService } from '../../src/workspaces/workspaces.service';
import { admin, Client, newWorkspace, userToken } from '../support/fixtures';

/** CONTRACT §4: the operator API behind SERVICE_ADMIN_TOKEN, and the bootstrap pair. */
describe('admin API and bootstrap (CONTRACT §4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  describe('who may call /v1/admin/*', () => {
    it('refuses a missing token (401), a wrong token (401), a workspace key or a user JWT (403)', async () => {
      const ws = await newWorkspace(t);
      await ws.user('ana');
      const jwt = userToken(ws.apiKey, ws.apiSecret, 'ana');
      for (const [path, method] of [
        ['/v1/admin/workspaces', 'get'],
        ['/v1/admin/workspaces', 'post'],
        [`/v1/admin/workspaces/${ws.id}`, 'delete'],
      ] as const) {
        expectError(await new Client(t, null).req(method, path, { name: 'x' }), 401, 'UNAUTHORIZED');
        expectError(
          await new Client(t, 'Bearer wrong-admin-token').req(method, path, { name: 'x' }),
          401,
          'UNAUTHORIZED',
        );
        expectError(
          await new Client(t, `Bearer ${ADMIN_TOKEN}x`).req(method, path, { name: 'x' }),
          401,
          'UNAUTHORIZED',
        );
        expectError(await ws.api.req(method, path, { name: 'x' }), 403, 'FORBIDDEN');
        expectError(await new Client(t, `Bearer ${jwt}`).req(method, path, { name: 'x' }), 403, 'FORBIDDEN');
      }
      // the workspace survived all of that
      expect((await ws.api.get('/v1/workspace')).status).toBe(200);
    });

    it('does not let the admin token act as a workspace', async () => {
      expectError(await admin(t).get('/v1/workspace'), 403, 'FORBIDDEN');
      expectError(await admin(t).get('/v1/users/ana'), 403, 'FORBIDDEN');
    });

    it('answers 404 on every admin route when SERVICE_ADMIN_TOKEN is unset', async () => {
      const noAdmin = await startTestApp({ SERVICE_ADMIN_TOKEN: '' });
      try {
        expectError(await admin(noAdmin).get('/v1/admin/workspaces'), 404, 'NOT_FOUND');
        expectError(await admin(noAdmin).post('/v1/admin/workspaces', { name: 'x' }), 404, 'NOT_FOUND');
        expectError(await new Client(noAdmin, null).get('/v1/admin/workspaces'), 404, 'NOT_FOUND');
        expectError(
          await new Client(noAdmin, null).delete('/v1/admin/workspaces/0190e1a0-0000-7000-8000-000000000000'),
          404,
          'NOT_FOUND',
        );
      } finally {
        await noAdmin.close();
      }
    });
  });

  describe('workspaces', () => {
    it('creates one: 201 {id, name, api_key, api_secret, created_at}; the pair works at once', async () => {
      const res = await admin(t).post('/v1/admin/workspaces', { name: 'Acme' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        name: 'Acme',
        api_key: expect.stringMatching(/^pk_/),
        api_secret: expect.stringMatching(/^sk_/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const ws = await new Client(t, `Bearer ${res.body.api_key}:${res.body.api_secret}`).get(
        '/v1/workspace',
      );
      expect(ws.status).toBe(200);
      expect(ws.body).toMatchObject({
        id: res.body.id,
        name: 'Acme',
        api_key: res.body.api_key,
        created_at: res.body.created_at,
      });
      expect(ws.body.api_secret).toBeUndefined();
    });

    it('keeps nothing in the database a guessed secret could be checked against (issue 11, finding 7)', async () => {
      const res = await admin(t).post('/v1/admin/workspaces', { name: 'Secretive' });
      const secret = String(res.body.api_secret);
      const db = t.app.get(DataSource);
      const rows: { row: Record<string, unknown> }[] = await db.query(
        'SELECT row_to_json(k) AS row FROM workspace_keys k WHERE workspace_id = $1',
        [res.body.id],
      );
      expect(rows).toHaveLength(1);
      // every column: only the sealed (AES-256-GCM) secret is derived from it, no plain or keyless digest
      expect(Object.keys(rows[0]!.row).sort()).toEqual([
        'api_key',
        'created_at',
        'expires_at',
        'id',
        'secret_sealed',
        'workspace_id',
      ]);
      const dump = JSON.stringify(rows);
      for (const text of [secret, secret.slice(3)]) {
        const digest = createHash('sha256').update(text).digest();
        for (const form of [
          text,
          digest.toString('hex'),
          digest.toString('base64'),
          digest.toString('base64url'),
        ])
          expect(dump).not.toContain(form);
      }
      expect(String(rows[0]!.row.secret_sealed)).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    });

    it('validates the body', async () => {
      expectError(await admin(t).post('/v1/admin/workspaces', {}), 400, 'VALIDATION_ERROR');
      expectError(await admin(t).post('/v1/admin/workspaces', { name: '' }), 400, 'VALIDATION_ERROR');
      expectError(await admin(t).post('/v1/admin/workspaces', { name: 42 }), 400, 'VALIDATION_ERROR');
      expectError(
        await admin(t).post('/v1/admin/workspaces', { name: 'x', plan: 'pro' }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('lists them newest first, paginated with limit and before', async () => {
      const created: string[] = [];
      for (let i = 0; i < 5; i++)
        created.push((await admin(t).post('/v1/admin/workspaces', { name: `page-${i}` })).body.id);

      const first = await admin(t).get('/v1/admin/workspaces?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.workspaces).toHaveLength(2);
      expect(first.body.has_more).toBe(true);
      expect(typeof first.body.next_cursor).toBe('string');
      expect(first.body.workspaces.map((w: { id: string }) => w.id)).toEqual([created[4], created[3]]);
      expect(first.body.workspaces[0]).toEqual({
        id: created[4],
        name: 'page-4',
        api_key: expect.stringMatching(/^pk_/),
        settings: expect.objectContaining({ read_receipts_enabled: true }),
        created_at: expect.any(String),
      });

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: {
          status: number;
          body: { workspaces: { id: string }[]; has_more: boolean; next_cursor: string | null };
        } = await admin(t).get(
          `/v1/admin/workspaces?limit=2${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.workspaces.map((w) => w.id));
        if (!page.body.has_more) expect(page.body.next_cursor).toBeNull();
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of created) expect(seen).toContain(id);

      const all = await admin(t).get('/v1/admin/workspaces');
      expect(all.body.has_more).toBe(false);
      expect(all.body.next_cursor).toBeNull();
    });

    it('refuses a bad limit or cursor with 400', async () => {
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'before=not-a-cursor', 'color=red']) {
        expectError(await admin(t).get(`/v1/admin/workspaces?${q}`), 400, 'VALIDATION_ERROR');
      }
    });

    it('deletes one with everything in it; a second delete or an unknown id is 404', async () => {
      const ws = await newWorkspace(t);
      await ws.users('ana', 'bo');
      const res = await admin(t).delete(`/v1/admin/workspaces/${ws.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectError(await ws.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');

      const db = t.app.get(DataSource);
      const left: { n: number }[] = await db.query(
        `SELECT (SELECT count(*) FROM users WHERE workspace_id = $1) + (SELECT count(*) FROM workspace_keys WHERE workspace_id = $1)
              + (SELECT count(*) FROM events WHERE workspace_id = $1) AS n`,
        [ws.id],
      );
      expect(Number(left[0]!.n)).toBe(0);

      expectError(await admin(t).delete(`/v1/admin/workspaces/${ws.id}`), 404, 'NOT_FOUND');
      expectError(await admin(t).delete('/v1/admin/workspaces/not-a-uuid'), 404, 'NOT_FOUND');
    });
  });

  describe('bootstrap pair', () => {
    const key = 'pk_bootstrap_test_key';
    const secret = 'sk_bootstrap_test_secret_0123456789';

    it('SERVICE_BOOTSTRAP_API_KEY/SECRET create a workspace with exactly that pair', async () => {
      const boot = await startTestApp({
        SERVICE_BOOTSTRAP_API_KEY: key,
        SERVICE_BOOTSTRAP_API_SECRET: secret,
      });
      try {
        const bearer = await new Client(boot, `Bearer ${key}:${secret}`).get('/v1/workspace');
        expect(bearer.status).toBe(200);
        expect(bearer.body.api_key).toBe(key);
        const basic = await boot.http().get('/v1/workspace').auth(key, secret);
        expect(basic.status).toBe(200);
        expect(basic.body.id).toBe(bearer.body.id);
        expectError(
          await new Client(boot, `Bearer ${key}:sk_bootstrap_test_secret_wrong`).get('/v1/workspace'),
          401,
          'UNAUTHORIZED',
        );

        const user = await new Client(boot, `Bearer ${key}:${secret}`).put('/v1/users/ana', { name: 'Ana' });
        expect(user.status).toBe(201);
        const token = await new Client(boot, `Bearer ${key}:${secret}`).post('/v1/users/ana/token', {});
        expect(token.status).toBe(200);
        expectError(
          await new Client(boot, `Bearer ${token.body.token}`).get('/v1/workspace'),
          403,
          'FORBIDDEN',
        );

        // a restart (or a second instance) finds the pair and creates nothing
        expect(await boot.app.get(WorkspacesService).ensureWithKeyPair('Bootstrap', key, secret)).toBe(
          'exists',
        );
        const count: { n: number }[] = await boot.app
          .get(DataSource)
          .query('SELECT count(*)::int AS n FROM workspace_keys WHERE api_key = $1', [key]);
        expect(count[0]!.n).toBe(1);
      } finally {
        await boot.close();
      }
    });
  });
});
