import { Client as Pg } from 'pg';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { Client, newWorkspace } from '../support/fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SERVICE_ROLE on one PostgreSQL + Redis: an `api` instance serves the routes and a `worker` runs the
 * log followers and jobs. A worker serves health and metrics and no public route (not the workspace
 * routes, not the API's documentation), and its followers do the work the `api` role leaves to it:
 * the search indexer among them.
 */
describe('service roles: api and worker', () => {
  let api: TestApp;
  let worker: TestApp;
  let pg: Pg;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await cloneDatabase();
    drop = db.drop;
    const shared = { databaseUrl: db.url, redisPrefix: `roles${Date.now().toString(36)}:` };
    api = await startTestApp({ SERVICE_ROLE: 'api' }, shared);
    worker = await startTestApp(
      { SERVICE_ROLE: 'worker', SERVICE_ENCRYPTION_KEY: api.env.SERVICE_ENCRYPTION_KEY! },
      shared,
    );
    pg = new Pg({ connectionString: db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg.end();
    await worker.close();
    await api.close();
    await drop();
  });

  it('a worker answers health and metrics, and none of the routes the API documents', async () => {
    const ws = await newWorkspace(api);
    expect((await worker.http().get('/healthz')).status).toBe(200);
    expect((await worker.http().get('/readyz')).status).toBe(200);
    expect((await worker.http().get('/metrics')).text).toContain('chat_');
    expect((await worker.http().get('/docs-json')).status).toBe(404);

    const doc = (await api.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method, path: path.replace(/\{[^}]+\}/g, 'x') })),
    );
    expect(routes.length).toBeGreaterThan(50);
    const asBackend = new Client(worker, ws.api.authorization);
    const answered: string[] = [];
    for (const { method, path } of routes) {
      const res = await asBackend.req(
        method as 'get' | 'post' | 'put' | 'patch' | 'delete',
        path,
        method === 'get' ? undefined : {},
      );
      if (res.status !== 404) answered.push(`${method.toUpperCase()} ${path}: ${res.status}`);
    }
    // every documented route but the three a worker is for
    expect(answered.sort()).toEqual(['GET /healthz: 200', 'GET /metrics: 200', 'GET /readyz: 200']);
    // the same requests reach the API instance
    expect((await new Client(api, ws.api.authorization).get('/v1/workspace')).status).toBe(200);
  });

  it("the worker's search indexer indexes what the API instance stored", async () => {
    const ws = await newWorkspace(api);
    await ws.users('ana', 'bo');
    const ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'g',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const sent = (
      await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'indexed by the worker',
        user_external_id: 'ana',
      })
    ).body;
    let indexed = false;
    for (let i = 0; i < 100 && !indexed; i++) {
      indexed =
        (await pg.query('SELECT 1 FROM message_search WHERE message_id = $1', [sent.id])).rowCount === 1;
      if (!indexed) await sleep(100);
    }
    expect(indexed).toBe(true);
  });
});
