import http from 'http';
import type { AddressInfo } from 'net';
import { hostname } from 'os';
import { lookup } from 'dns/promises';
import { SafeHttpClient } from './safe-http.client';

describe('SafeHttpClient', () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      if (req.url === '/slow') {
        const timer = setTimeout(() => res.end('late'), 1000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (req.url === '/big') {
        res.writeHead(200);
        res.end('x'.repeat(200_000));
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(301, { location: '/elsewhere' });
        res.end();
        return;
      }
      res.writeHead(201);
      res.end(`got ${String(req.headers['x-test'])}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const post = (client: SafeHttpClient, url: string, timeoutMs = 2000) =>
    client.post({ url, headers: { 'x-test': 'yes' }, body: Buffer.from('{}'), timeoutMs, keepBytes: 1024 });

  it('posts when private networks are allowed, keeping the status and body', async () => {
    const c = new SafeHttpClient(true);
    expect(await post(c, `http://127.0.0.1:${port}/ok`)).toMatchObject({
      kind: 'response',
      status: 201,
      body: 'got yes',
    });
    expect(await post(c, `http://127.0.0.1:${port}/redirect`)).toMatchObject({
      kind: 'response',
      status: 301,
    });
    const big = await post(c, `http://127.0.0.1:${port}/big`);
    expect(big.kind === 'response' && big.body.length).toBe(1024);
    expect(await post(c, `http://127.0.0.1:${port}/slow`, 200)).toMatchObject({
      kind: 'error',
      error: 'timed out after 200 ms',
    });
    c.close();
  });

  it('refuses loopback literals and names before sending anything', async () => {
    const c = new SafeHttpClient(false);
    const before = hits;
    expect(await post(c, `http://127.0.0.1:${port}/ok`)).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback/),
    });
    expect(await post(c, `http://[::ffff:127.0.0.1]:${port}/ok`)).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(/IPv4-mapped/),
    });
    expect(await post(c, `http://localhost:${port}/ok`)).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(/loopback/),
    });
    expect(await post(c, `ftp://127.0.0.1:${port}/ok`)).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(/scheme/),
    });
    expect(hits).toBe(before);
    c.close();
  });

  it('checks the address a host name resolves to in the socket lookup itself', async () => {
    const name = hostname();
    const addrs = await lookup(name, { all: true }).catch(() => []);
    if (!addrs.some((a) => a.address.startsWith('127.'))) return; // this machine's name is not loopback here
    const c = new SafeHttpClient(false);
    const before = hits;
    const r = await post(c, `http://${name}:${port}/ok`);
    expect(r).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(new RegExp(`^refused: ${name} resolves to 127\\.`)),
    });
    expect(hits).toBe(before);
    expect(await c.resolveRefusal(new URL(`http://${name}/`))).toMatch(/resolves to 127\./);
    c.close();
  });
});
