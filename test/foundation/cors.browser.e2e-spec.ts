import { readFileSync } from 'fs';
import { createServer, Server } from 'http';
import type { AddressInfo } from 'net';
import { dirname, join } from 'path';
import { Browser, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../support/app';
import { describeInBrowser, launchChromium } from '../support/browser';
import { newWorkspace, TestUser } from '../support/fixtures';

/**
 * A real browser (Debian's Chromium through playwright-core) on a page served from another origin
 * than the API: an allowed origin lists channels, sends and receives in realtime; any other origin's
 * fetch and socket fail, as Chromium enforces the headers the service sends.
 */
/** Booting the app on PGlite and launching Chromium, generously: a loaded 2-core machine is slow. */
const BOOT_TIMEOUT_MS = 300_000;
const SOCKET_IO_CLIENT = readFileSync(
  join(dirname(require.resolve('socket.io-client/package.json')), 'dist', 'socket.io.min.js'),
);

/** A static site on its own port (so its own origin): an empty page and the socket.io browser client. */
async function staticSite(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/socket.io.min.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(SOCKET_IO_CLIENT);
    } else if (req.url === '/') {
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end('<!doctype html><title>app</title><script src="/socket.io.min.js"></script>');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What the page's script keeps on its global object (the browser's `window`). */
interface PageState {
  received: { type: string; data: { id: string; content: string } }[];
}

declare const io: (
  url: string,
  opts: Record<string, unknown>,
) => {
  on: <T>(event: string, fn: (arg: T) => void) => void;
  close: () => void;
};

/** In the page: open a socket, resolve on connect or with the connect error's message. */
function pageConnect(page: Page, api: string, token: string, transports: string[]): Promise<string> {
  return page.evaluate(
    ({ api, token, transports }) =>
      new Promise<string>((resolve) => {
        const socket = io(api, { auth: { token }, transports, reconnection: false });
        const state = globalThis as unknown as PageState;
        state.received = [];
        socket.on('message.new', (e: PageState['received'][number]) => state.received.push(e));
        socket.on('connect', () => resolve('connected'));
        socket.on('connect_error', (e: Error) => resolve(`connect_error: ${e.message}`));
      }),
    { api, token, transports },
  );
}

jest.setTimeout(120_000);

describeInBrowser(__filename)('CORS in Chromium: a page on another origin', () => {
  let t: TestApp;
  let allowedSite: Awaited<ReturnType<typeof staticSite>>;
  let otherSite: Awaited<ReturnType<typeof staticSite>>;
  let browser: Browser;
  let ana: TestUser;
  let bo: TestUser;
  let channelId: string;

  beforeAll(async () => {
    allowedSite = await staticSite();
    otherSite = await staticSite();
    t = await startTestApp({ SERVICE_CORS_ORIGINS: allowedSite.origin });
    const ws = await newWorkspace(t);
    ana = await ws.user('ana');
    bo = await ws.user('bo');
    const ch = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      name: 'Team',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    channelId = (ch.body as { id: string }).id;
    browser = await launchChromium();
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await allowedSite?.close();
    await otherSite?.close();
  });

  async function open(site: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(site);
    return page;
  }

  it('an allowed origin lists channels, sends, and receives in realtime', async () => {
    const page = await open(allowedSite.origin);
    const api = t.baseUrl;
    expect(new URL(api).origin).not.toBe(allowedSite.origin);

    // GET with Authorization: a preflighted request in the browser's eyes
    const listed = await page.evaluate(
      async ({ api, token }) => {
        const res = await fetch(`${api}/v1/me/channels`, { headers: { Authorization: `Bearer ${token}` } });
        return { status: res.status, body: (await res.json()) as { channels: { id: string }[] } };
      },
      { api, token: ana.token },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.channels.map((c) => c.id)).toContain(channelId);

    // default transports: long-polling first (CORS on XHR), then the websocket upgrade
    expect(await pageConnect(page, api, ana.token, ['polling', 'websocket'])).toBe('connected');

    const sent = await page.evaluate(
      async ({ api, token, channelId }) => {
        const res = await fetch(`${api}/v1/channels/${channelId}/messages`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ content: 'hello from the browser' }),
        });
        // a non-safelisted response header is readable only when exposed
        return {
          status: res.status,
          requestId: res.headers.get('X-Request-Id'),
          body: (await res.json()) as { id: string },
        };
      },
      { api, token: ana.token, channelId },
    );
    expect(sent.status).toBe(201);
    expect(sent.requestId).toBeTruthy();

    // someone else's message arrives over the socket, as does her own
    const fromBo = await bo.api.post(`/v1/channels/${channelId}/messages`, { content: 'hi Ana' });
    expect(fromBo.status).toBe(201);
    const boId = (fromBo.body as { id: string }).id;
    await page.waitForFunction(
      (ids) => ids.every((id) => (globalThis as unknown as PageState).received.some((e) => e.data.id === id)),
      [sent.body.id, boId],
      { timeout: 20_000 },
    );
    const received = await page.evaluate(() => (globalThis as unknown as PageState).received);
    expect(received.find((e) => e.data.id === boId)).toMatchObject({
      type: 'message.new',
      data: { content: 'hi Ana' },
    });
    await page.close();
  });

  it('another origin cannot: its fetch fails and its socket is refused', async () => {
    const page = await open(otherSite.origin);
    const api = t.baseUrl;
    const outcome = await page.evaluate(
      async ({ api, token }) => {
        try {
          const res = await fetch(`${api}/v1/me/channels`, { headers: { Authorization: `Bearer ${token}` } });
          return `status ${res.status}`;
        } catch (e) {
          return `failed: ${(e as Error).name}`;
        }
      },
      { api, token: ana.token },
    );
    expect(outcome).toBe('failed: TypeError');
    // even a simple request (no preflight) cannot be read
    const simple = await page.evaluate(
      async (api) =>
        fetch(`${api}/healthz`).then(
          (r) => `status ${r.status}`,
          (e: Error) => `failed: ${e.name}`,
        ),
      api,
    );
    expect(simple).toBe('failed: TypeError');

    expect(await pageConnect(page, api, ana.token, ['polling'])).toMatch(/^connect_error/);
    expect(await pageConnect(page, api, ana.token, ['websocket'])).toMatch(/^connect_error/);
    await page.close();
  });
});
