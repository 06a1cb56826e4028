import http from 'http';
import type { AddressInfo } from 'net';
import { OutboundGet, SafeHttpClient } from './safe-http.client';

/** SafeHttpClient.get (link previews, CONTRACT §26) against real local servers. */
describe('SafeHttpClient.get', () => {
  let site: http.Server;
  let inside: http.Server;
  let port = 0;
  let insidePort = 0;
  let insideHits = 0;
  const html = '<html><head><title>ok</title></head></html>';

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/page' });
        return res.end();
      }
      if (req.url === '/inside') {
        res.writeHead(301, { location: `http://127.0.0.2:${insidePort}/secret` });
        return res.end();
      }
      if (req.url === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('not html');
      }
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end('x'.repeat(50_000));
      }
      if (req.url === '/slow') {
        const timer = setTimeout(() => res.end(html), 2000);
        return res.on('close', () => clearTimeout(timer));
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    inside = http.createServer((_req, res) => {
      insideHits++;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(html);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => inside.listen(0, '127.0.0.2', r));
    port = (site.address() as AddressInfo).port;
    insidePort = (inside.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of [site, inside]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  // the line drawn so that this machine has an "outside" (127.0.0.1) and an "inside" (127.0.0.2)
  const client = () =>
    new SafeHttpClient(false, 8, (address) => (address === '127.0.0.2' ? 'a private address' : null));
  const get = (c: SafeHttpClient, path: string, more: Partial<OutboundGet> = {}) =>
    c.get({
      url: `http://127.0.0.1:${port}${path}`,
      headers: {},
      timeoutMs: 1500,
      maxBytes: 10_000,
      maxRedirects: 3,
      accept: (t) => t === 'text/html',
      ...more,
    });

  it('follows up to 3 redirects and reads the page at the end', async () => {
    const c = client();
    const r = await get(c, '/hop/2');
    expect(r).toMatchObject({ kind: 'page', url: `http://127.0.0.1:${port}/page`, contentType: 'text/html' });
    expect(r.kind === 'page' && r.body.toString()).toBe(html);
    expect(await get(c, '/hop/3')).toEqual({ kind: 'failed', error: 'more than 3 redirects' });
    c.close();
  });

  it('checks every redirect’s target: one into a refused address is refused and never contacted', async () => {
    const c = client();
    expect(await get(c, '/inside')).toEqual({ kind: 'refused', error: '127.0.0.2 is a private address' });
    expect(insideHits).toBe(0);
    c.close();
  });

  it('takes the policy a request names over its own, in both directions', async () => {
    const strict = client();
    const inside = `http://127.0.0.2:${insidePort}/secret`;
    expect((await get(strict, '', { url: inside, allowPrivateNetworks: true })).kind).toBe('page');
    expect(insideHits).toBe(1);
    strict.close();
    const permissive = new SafeHttpClient(true, 8, () => 'refused by the test');
    expect(
      await get(permissive, '', { url: `http://127.0.0.1:${port}/page`, allowPrivateNetworks: false }),
    ).toEqual({
      kind: 'refused',
      error: '127.0.0.1 is refused by the test',
    });
    expect((await get(permissive, '/page')).kind).toBe('page');
    permissive.close();
  });

  it('reads only accepted types, at most maxBytes, within one deadline', async () => {
    const c = client();
    expect(await get(c, '/text')).toEqual({ kind: 'failed', error: 'type text/plain' });
    const big = await get(c, '/big');
    expect(big.kind === 'page' && big.body.length).toBe(10_000);
    const started = Date.now();
    expect(await get(c, '/slow', { timeoutMs: 300 })).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/timed out/),
    });
    expect(Date.now() - started).toBeLessThan(1000);
    c.close();
  });
});
