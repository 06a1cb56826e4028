import http from 'http';
import type { AddressInfo } from 'net';
import { DataSource } from 'typeorm';
import { PreviewsService } from '../../src/previews/previews.service';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/** CONTRACT §26's POST /v1/previews, against pages served here: on the embedded database and on PostgreSQL. */
describe('link previews: POST /v1/previews', () => {
  let t: TestApp;
  let site: http.Server;
  let base = '';
  const hits = new Map<string, number>();
  let ws: TestWorkspace;
  let ana: TestUser;

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      if (req.url === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('plain');
      }
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/article' });
        return res.end();
      }
      if (req.url === '/untitled') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body>no title</body></html>');
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'user-agent-seen': String(req.headers['user-agent']),
      });
      res.end(
        '<html><head><meta property="og:title" content="An &amp; article"><meta property="og:description" content="Read it">' +
          '<meta property="og:image" content="/cover.png"><meta property="og:site_name" content="Site"></head><body></body></html>',
      );
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    site.closeAllConnections();
    await new Promise((r) => site.close(r));
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana] = (await ws.users('ana')) as [TestUser];
  });

  const preview = (who: TestUser | TestWorkspace, url: string) => who.api.post('/v1/previews', { url });

  it('answers the preview of a page (after a redirect too), and a second ask within the hour from the cache', async () => {
    const url = `${base}/article?x=${Date.now()}`;
    const res = await preview(ana, url);
    expect([res.status, res.body]).toEqual([
      200,
      {
        url,
        title: 'An & article',
        description: 'Read it',
        image_url: `${base}/cover.png`,
        site_name: 'Site',
      },
    ]);
    const path = new URL(url).pathname + new URL(url).search;
    expect(hits.get(path)).toBe(1);
    expect((await preview(ws, url)).body.title).toBe('An & article'); // the backend key, the same workspace's cache
    expect(hits.get(path)).toBe(1);
    const moved = await preview(ana, `${base}/moved`);
    expect([moved.status, moved.body.url, moved.body.title]).toEqual([200, `${base}/moved`, 'An & article']);
  });

  it('400 for what is not an http(s) URL or is too long, 422 PREVIEW_UNAVAILABLE for no usable page, 403 when turned off', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'not a url', `${base}/${'a'.repeat(2048)}`]) {
      const res = await preview(ana, url);
      expect([url.slice(0, 20), res.status, res.body.error.code]).toEqual([
        url.slice(0, 20),
        400,
        'VALIDATION_ERROR',
      ]);
    }
    for (const path of ['/text', '/untitled', '/missing-host-port']) {
      const url = path === '/missing-host-port' ? 'http://127.0.0.1:1/' : `${base}${path}`;
      const res = await preview(ana, url);
      expect([path, res.status, res.body.error.code]).toEqual([path, 422, 'PREVIEW_UNAVAILABLE']);
    }
    expect(
      (await ws.api.patch('/v1/workspace/settings', { link_previews_enabled: false })).body
        .link_previews_enabled,
    ).toBe(false);
    const off = await preview(ana, `${base}/article`);
    expect([off.status, off.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('the scheduler sweeps what the cache holds past the hour, and a page is fetched again then', async () => {
    const url = `${base}/article?sweep=${Date.now()}`;
    expect((await preview(ana, url)).status).toBe(200);
    const db = t.app.get(DataSource);
    await db.query(
      `UPDATE link_previews SET fetched_at = now() - interval '2 hours' WHERE workspace_id = $1`,
      [ws.id],
    );
    expect(await t.app.get(PreviewsService).fireDue(50)).toBeGreaterThanOrEqual(1);
    expect(await db.query(`SELECT url FROM link_previews WHERE workspace_id = $1`, [ws.id])).toEqual([]);
    const path = new URL(url).pathname + new URL(url).search;
    expect((await preview(ana, url)).status).toBe(200);
    expect(hits.get(path)).toBe(2);
  });

  it('at most 30 a minute per user, then 429 with Retry-After', async () => {
    // on Redis the limit is a sliding estimate over two fixed minutes: 31 requests straddling a minute's
    // end would count the earlier ones twice for a moment, so they start at the beginning of a minute
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
    const answers = [];
    for (let i = 0; i < 31; i++) answers.push(await preview(ana, `${base}/article?n=${i}`));
    expect(answers.slice(0, 30).map((r) => r.status)).toEqual(Array(30).fill(200));
    expect([answers[30]!.status, answers[30]!.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(answers[30]!.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('refuses a loopback address on a server that does not allow private networks, fetching nothing', async () => {
    const strict = await startTestApp({ SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    try {
      const sws = await newWorkspace(strict);
      const [bo] = (await sws.users('bo')) as [TestUser];
      const before = hits.get('/article?strict') ?? 0;
      const res = await preview(bo, `${base}/article?strict`);
      expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(hits.get('/article?strict') ?? 0).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
