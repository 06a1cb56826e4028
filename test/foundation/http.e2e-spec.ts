import { isIntegration } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestWorkspace } from '../support/fixtures';

/** CONTRACT §1-§2 (request ids, errors) and §14 (operations endpoints). */
describe('HTTP surface: errors, request ids, operations', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    t = await startTestApp();
    ws = await newWorkspace(t);
  });
  afterAll(async () => t.close());

  describe('errors', () => {
    it('answers an unknown route with 404 NOT_FOUND in the error shape, with or without credentials', async () => {
      expectError(await t.http().get('/v1/nope'), 404, 'NOT_FOUND');
      expectError(await t.http().post('/does/not/exist').send({ a: 1 }), 404, 'NOT_FOUND');
      expectError(await ws.api.get('/v1/nope'), 404, 'NOT_FOUND');
      expectError(await ws.api.req('patch', '/v1/users/ana'), 404, 'NOT_FOUND');
    });

    it('answers a body over 256 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const big = { name: 'x', metadata: { blob: 'x'.repeat(256 * 1024) } };
      expectError(await ws.api.put('/v1/users/ana', big), 413, 'PAYLOAD_TOO_LARGE');
      expectError(
        await t
          .http()
          .post('/v1/admin/workspaces')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(big)),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      // just under the limit is read (and then refused for its content, not its size)
      const under = JSON.stringify({ metadata: { blob: 'x'.repeat(250 * 1024) } });
      expectError(
        await ws.api.req('put', '/v1/users/ana').set('Content-Type', 'application/json').send(under),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('answers invalid JSON with 400 VALIDATION_ERROR', async () => {
      const res = await ws.api
        .req('put', '/v1/users/ana')
        .set('Content-Type', 'application/json')
        .send('{"name": "Ana",');
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).not.toMatch(
        /at JSON\.parse|Unexpected token .* in JSON at position \d+\n/,
      );
      expectError(
        await ws.api.req('post', '/v1/users').set('Content-Type', 'application/json').send('nope'),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('answers validation errors with details naming the fields', async () => {
      const res = await ws.api.put('/v1/users/ana', { name: 5, surprise: true });
      expectError(res, 400, 'VALIDATION_ERROR');
      const fields = (res.body.error.details as { field: string; message: string }[]).map((d) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'surprise']));
    });
  });

  describe('X-Request-Id', () => {
    it('is echoed when the client sends one, on success and in error bodies', async () => {
      const ok = await ws.api.get('/v1/workspace').set('X-Request-Id', 'req-abc-123');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBe('req-abc-123');

      const err = await ws.api.get('/v1/users/nobody').set('X-Request-Id', 'req-err-456');
      expectError(err, 404, 'NOT_FOUND');
      expect(err.headers['x-request-id']).toBe('req-err-456');
      expect(err.body.error.request_id).toBe('req-err-456');

      const unauth = await t.http().get('/v1/workspace').set('X-Request-Id', 'req-401');
      expectError(unauth, 401, 'UNAUTHORIZED');
      expect(unauth.body.error.request_id).toBe('req-401');

      const tooBig = await ws.api
        .req('put', '/v1/users/ana')
        .set('X-Request-Id', 'req-413')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ blob: 'x'.repeat(300 * 1024) }));
      expectError(tooBig, 413, 'PAYLOAD_TOO_LARGE');
      expect(tooBig.body.error.request_id).toBe('req-413');
    });

    it('is generated when absent (or unusable), and differs per request', async () => {
      const a = await t.http().get('/healthz');
      const b = await t.http().get('/healthz');
      expect(a.headers['x-request-id']).toEqual(expect.any(String));
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);

      const err = await t.http().get('/v1/nope');
      expect(err.body.error.request_id).toBe(err.headers['x-request-id']);

      const bad = await t
        .http()
        .get('/healthz')
        .set('X-Request-Id', `bad id with spaces ${'x'.repeat(200)}`);
      expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('operations', () => {
    it('GET /healthz answers 200', async () => {
      const res = await t.http().get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('GET /readyz reports the database and Redis', async () => {
      const res = await t.http().get('/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'ok',
        checks: { database: 'up', redis: isIntegration() ? 'up' : 'not configured' },
      });
    });

    it('GET /metrics is Prometheus text with the HTTP latency histogram labelled by route template', async () => {
      await ws.api.get('/v1/users/someone');
      await ws.api.put('/v1/users/someone', {});
      const res = await t.http().get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
      expect(res.text).toMatch(
        /http_request_duration_seconds_bucket\{[^}]*route="\/v1\/users\/:external_id"[^}]*status="404"/,
      );
      expect(res.text).toMatch(
        /http_request_duration_seconds_count\{[^}]*method="PUT",route="\/v1\/users\/:external_id",status="201"\}/,
      );
      expect(res.text).not.toContain('route="/v1/users/someone"');
      expect(res.text).toContain('process_cpu_user_seconds_total');
      expect(res.text).toContain('nodejs_heap_size_used_bytes');
    });

    it('GET /docs serves the Swagger UI as HTML', async () => {
      const res = await t.http().get('/docs').redirects(2);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toMatch(/swagger/i);
    });

    it('GET /docs-json is OpenAPI 3 with the routes and the security schemes', async () => {
      const res = await t.http().get('/docs-json');
      expect(res.status).toBe(200);
      const doc = res.body as {
        openapi: string;
        paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
        components: { securitySchemes: Record<string, { type: string; scheme: string }> };
      };
      expect(doc.openapi).toMatch(/^3\./);
      for (const path of [
        '/healthz',
        '/readyz',
        '/v1/workspace',
        '/v1/workspace/settings',
        '/v1/workspace/rotate-secret',
        '/v1/admin/workspaces',
        '/v1/admin/workspaces/{id}',
        '/v1/users',
        '/v1/users/{external_id}',
        '/v1/users/{external_id}/token',
      ]) {
        expect(Object.keys(doc.paths)).toContain(path);
      }
      expect(Object.keys(doc.paths['/v1/users/{external_id}']!).sort()).toEqual(['delete', 'get', 'put']);
      // the catch-up routes document their query parameters
      const queryOf = (path: string) =>
        ((doc.paths[path]!.get as { parameters?: { name: string; in: string }[] }).parameters ?? [])
          .filter((x) => x.in === 'query')
          .map((x) => x.name)
          .sort();
      expect(queryOf('/v1/me/sync')).toEqual(['limit', 'since']);
      expect(queryOf('/v1/channels/{id}/events')).toEqual(['after_seq', 'limit']);
      expect(doc.components.securitySchemes).toMatchObject({
        workspaceKey: { type: 'http', scheme: 'bearer' },
        workspaceBasic: { type: 'http', scheme: 'basic' },
        userJwt: { type: 'http', scheme: 'bearer' },
        adminToken: { type: 'http', scheme: 'bearer' },
      });
      const security = (path: string, method: string) =>
        (doc.paths[path]![method]!.security ?? []).flatMap((s) => Object.keys(s));
      expect(security('/v1/users/{external_id}', 'put')).toEqual(
        expect.arrayContaining(['workspaceKey', 'workspaceBasic']),
      );
      expect(security('/v1/users/{external_id}', 'put')).not.toContain('userJwt');
      expect(security('/v1/admin/workspaces', 'post')).toEqual(['adminToken']);
      expect(security('/healthz', 'get')).toEqual([]);
    });
  });
});
