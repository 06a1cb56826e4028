/**
 * Issue 12: the OpenAPI document at /docs-json is complete and truthful.
 * - every route the application serves (read off Express's router) is in the document, and every
 *   documented operation is served;
 * - every operation has a summary, a unique lowerCamelCase operationId, declared tags, a typed JSON
 *   answer (or none), and documents its errors with the shared `Error` schema;
 * - a handful of real error answers: each status is documented for its operation and each body
 *   matches the Error schema.
 */
import type { Express } from 'express';
import request from 'supertest';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import {
  checkSchema,
  findOperation,
  HTTP_METHODS,
  OpenApiDocument,
  Operation,
  responseSchema,
} from './openapi-schema';

/** Served but deliberately not API operations. */
const UNDOCUMENTED = [
  /^(GET|HEAD) \/docs/, // Swagger UI and the document itself
  /^OPTIONS \/v1\/uploads\//, // the CORS preflight of a browser upload
  /^POST \/demo\/api\/session$/, // the demo app's development sign-in (SERVICE_DEMO), not an API operation
];

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** `:id` → `{id}`, `*key` → `{key}`: Express paths in OpenAPI's notation. */
const toTemplate = (path: string): string => path.replace(/[:*](\w+)/g, '{$1}');

function operationsOf(doc: OpenApiDocument): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path, op: item[m]! })),
  );
}

describe('OpenAPI: the document at /docs-json', () => {
  let t: TestApp;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.http().get('/docs-json').expect(200)).body as OpenApiDocument;
  }, 300_000); // a busy machine boots slowly: generous, never a measure of speed
  afterAll(() => t?.close());

  it('documents every route the application serves, and serves every documented operation', () => {
    const express: Express = t.app.getHttpAdapter().getInstance();
    const served = new Set<string>();
    for (const layer of (express.router as unknown as { stack: RouteLayer[] }).stack) {
      if (!layer.route) continue;
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') served.add(`${method.toUpperCase()} ${toTemplate(layer.route.path)}`);
      }
    }
    const documented = new Set(operationsOf(doc).map((o) => `${o.method} ${o.path}`));
    const undocumented = [...served].filter(
      (r) => !documented.has(r) && !UNDOCUMENTED.some((re) => re.test(r)),
    );
    const unserved = [...documented].filter((r) => !served.has(r));
    expect(undocumented).toEqual([]);
    expect(unserved).toEqual([]);
    expect(documented.size).toBeGreaterThan(80);
  });

  it('gives every operation a summary, a unique lowerCamelCase operationId and a declared tag', () => {
    const declared = new Set(
      (doc as unknown as { tags: { name: string; description: string }[] }).tags.map((tag) => tag.name),
    );
    const ids = new Map<string, string>();
    const problems: string[] = [];
    for (const { method, path, op } of operationsOf(doc)) {
      const where = `${method} ${path}`;
      if (!op.summary) problems.push(`${where}: no summary`);
      if (!op.operationId || !/^[a-z][a-zA-Z0-9]+$/.test(op.operationId))
        problems.push(`${where}: operationId ${op.operationId}`);
      else if (ids.has(op.operationId))
        problems.push(`${where}: operationId ${op.operationId} also on ${ids.get(op.operationId)}`);
      else ids.set(op.operationId, where);
      if (!op.tags?.length || !op.tags.every((tag) => declared.has(tag)))
        problems.push(`${where}: tags ${String(op.tags)}`);
    }
    expect(problems).toEqual([]);
  });

  it('types every parameter and JSON answer, and documents every error with the Error schema', () => {
    const problems: string[] = [];
    for (const { method, path, op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json']?.schema;
        if (Number(status) >= 400 && !(path === '/readyz' && status === '503')) {
          if (json?.$ref !== '#/components/schemas/Error')
            problems.push(`${method} ${path} ${status}: not the Error schema`);
        } else if (json && !json.$ref) problems.push(`${method} ${path} ${status}: an untyped JSON answer`);
      }
      if (!Object.keys(op.responses).some((s) => s.startsWith('2')))
        problems.push(`${method} ${path}: no success answer`);
      for (const p of op.parameters ?? [])
        if (!p.schema?.type && !p.schema?.$ref)
          problems.push(`${method} ${path}: parameter ${p.name} has no type`);
      const auth = op.security?.length ?? 0;
      if (auth && !(op.responses['401'] && op.responses['403']))
        problems.push(`${method} ${path}: no 401/403`);
    }
    expect(problems).toEqual([]);
  });

  it('documents the Retry-After header of every 429 and 503', () => {
    const missing = operationsOf(doc).flatMap(({ method, path, op }) =>
      Object.entries(op.responses)
        .filter(([status]) => status === '429' || status === '503')
        .filter(([, r]) => !(r as { headers?: Record<string, unknown> }).headers?.['Retry-After'])
        .map(([status]) => `${method} ${path} ${status}`),
    );
    expect(missing).toEqual([]);
    expect(operationsOf(doc).filter(({ op }) => op.responses['429']).length).toBeGreaterThan(0);
  });

  it('documents limits as bounded integers and requires no body where none is needed', () => {
    const problems: string[] = [];
    for (const { method, path, op } of operationsOf(doc)) {
      for (const p of op.parameters ?? []) {
        if (p.name !== 'limit') continue;
        if (p.schema?.type !== 'integer' || p.schema.minimum !== 1 || !p.schema.maximum)
          problems.push(`${method} ${path}: limit ${JSON.stringify(p.schema)}`);
      }
    }
    const required = operationsOf(doc)
      .filter(
        (o) =>
          (o.method === 'DELETE' || o.path.endsWith('/read') || o.path.endsWith('/delivered')) &&
          o.op.requestBody?.required,
      )
      .map((o) => o.op.operationId);
    // the three DELETEs that name what they remove in the body (CONTRACT §5, §6)
    expect(required.sort()).toEqual(['removeChannelMembers', 'removeMyChannelMembers', 'unblockUserByBody']);
    expect(problems).toEqual([]);
    const optional = [
      'markChannelRead',
      'markChannelDelivered',
      'removeReaction',
      'issueUserToken',
      'muteUser',
      'banUser',
      'flagMessage',
    ];
    for (const o of operationsOf(doc).filter((x) => optional.includes(x.op.operationId ?? '')))
      expect(o.op.requestBody?.required).toBe(false);
  });

  it('states the license, the tags and four distinct security schemes', () => {
    const d = doc as unknown as {
      info: { license: { name: string } };
      tags: { name: string; description: string }[];
      components: {
        securitySchemes: Record<string, { type: string; scheme: string; bearerFormat?: string }>;
      };
    };
    expect(d.info.license.name).toBe('MIT');
    expect(d.tags.every((tag) => tag.description.length > 10)).toBe(true);
    const s = d.components.securitySchemes;
    expect(Object.keys(s).sort()).toEqual(['adminToken', 'userJwt', 'workspaceBasic', 'workspaceKey']);
    expect(s.userJwt!.bearerFormat).toBe('JWT');
    expect(s.workspaceBasic!.scheme).toBe('basic');
    expect(new Set(Object.values(s).map((x) => `${x.scheme}:${x.bearerFormat ?? ''}`)).size).toBe(4);
  });

  it('documents the 201 of a first send and the 200 of its replay', () => {
    const send = findOperation(doc, 'POST', '/v1/channels/x/messages')!.op;
    expect(send.operationId).toBe('sendMessage');
    expect(responseSchema(send, 201)?.$ref).toBe('#/components/schemas/Message');
    expect(responseSchema(send, 200)?.$ref).toBe('#/components/schemas/Message');
  });

  it('the strict schema check catches an undocumented field and a wrong type', () => {
    const error = { $ref: '#/components/schemas/Error' };
    expect(checkSchema(doc, error, { error: { code: 'NOT_FOUND', message: 'x', request_id: 'r' } })).toEqual(
      [],
    );
    expect(
      checkSchema(doc, error, { error: { code: 'NOT_FOUND', message: 'x', request_id: 'r', stack: '' } }),
    ).toEqual(['$.error.stack: not in the schema']);
    expect(checkSchema(doc, error, { error: { code: 'NOPE', message: 1, request_id: 'r' } })).toHaveLength(2);
  });

  describe('error answers are documented and have the Error body', () => {
    let ws: TestWorkspace;
    let ana: TestUser;
    let bo: TestUser;
    let cy: TestUser;
    let channelId: string;
    const seen: string[] = [];

    /** Checks that the answer's status is documented for the operation and its body matches the schema. */
    function expectDocumented(res: request.Response, method: string, code: string): void {
      const path = new URL(res.request.url).pathname;
      const found = findOperation(doc, method, path);
      expect(found).toBeDefined();
      const schema = responseSchema(found!.op, res.status);
      expect({ op: found!.op.operationId, status: res.status, documented: schema?.$ref }).toEqual({
        op: found!.op.operationId,
        status: res.status,
        documented: '#/components/schemas/Error',
      });
      expect(checkSchema(doc, schema!, res.body)).toEqual([]);
      expect(res.body.error.code).toBe(code);
      seen.push(`${found!.op.operationId} ${res.status} ${code}`);
    }

    beforeAll(async () => {
      ws = await newWorkspace(t);
      ana = await ws.user('ana');
      bo = await ws.user('bo');
      cy = await ws.user('cy');
      const res = await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'g',
        created_by: 'ana',
        member_external_ids: ['bo'],
        slow_mode_seconds: 60,
      });
      channelId = (res.body as { id: string }).id;
    });

    afterAll(() => {
      // 400, 401, 403, 404, 409, 413 (two codes), 415, 422, 429
      expect(new Set(seen.map((s) => s.split(' ')[1])).size).toBeGreaterThanOrEqual(9);
    });

    it('400 VALIDATION_ERROR', async () => {
      expectDocumented(await ws.api.post('/v1/channels', { type: 'triangle' }), 'POST', 'VALIDATION_ERROR');
    });

    it('401 UNAUTHORIZED', async () => {
      expectDocumented(
        await t.http().get('/v1/workspace').set('Authorization', 'Bearer nope'),
        'GET',
        'UNAUTHORIZED',
      );
    });

    it('403 FORBIDDEN (a workspace key on a user route) and NOT_A_MEMBER', async () => {
      expectDocumented(await ws.api.get('/v1/me/channels'), 'GET', 'FORBIDDEN');
      expectDocumented(
        await cy.api.post(`/v1/channels/${channelId}/messages`, { content: 'hi' }),
        'POST',
        'NOT_A_MEMBER',
      );
    });

    it('404 NOT_FOUND', async () => {
      expectDocumented(await ws.api.get('/v1/channels/nowhere'), 'GET', 'NOT_FOUND');
      expectDocumented(await ws.api.get('/v1/webhooks/not-a-uuid'), 'GET', 'NOT_FOUND');
    });

    it('409 LAST_ADMIN', async () => {
      expectDocumented(
        await ws.api.patch(`/v1/channels/${channelId}/members/ana`, { role: 'member' }),
        'PATCH',
        'LAST_ADMIN',
      );
    });

    it('413 MESSAGE_TOO_LARGE and PAYLOAD_TOO_LARGE', async () => {
      const big = 'x'.repeat(9000);
      expectDocumented(
        await ana.api.post(`/v1/channels/${channelId}/messages`, { content: big }),
        'POST',
        'MESSAGE_TOO_LARGE',
      );
      const huge = { content: 'y'.repeat(300 * 1024) };
      expectDocumented(
        await ana.api.post(`/v1/channels/${channelId}/messages`, huge),
        'POST',
        'PAYLOAD_TOO_LARGE',
      );
    });

    it('415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await ana.api.post('/v1/attachments/presign', {
        filename: 'a.exe',
        mime_type: 'application/x-msdownload',
        size_bytes: 10,
      });
      expectDocumented(res, 'POST', 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('422 MESSAGE_DELETED', async () => {
      const sent = await ana.api
        .post(`/v1/channels/${channelId}/messages`, { content: 'soon gone' })
        .expect(201);
      await ana.api.delete(`/v1/messages/${sent.body.id}`).expect(200);
      expectDocumented(await ana.api.post(`/v1/messages/${sent.body.id}/pin`), 'POST', 'MESSAGE_DELETED');
    });

    it('429 SLOW_MODE', async () => {
      await bo.api.post(`/v1/channels/${channelId}/messages`, { content: 'one' }).expect(201);
      const res = await bo.api.post(`/v1/channels/${channelId}/messages`, { content: 'two' });
      expectDocumented(res, 'POST', 'SLOW_MODE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });
  });
});
