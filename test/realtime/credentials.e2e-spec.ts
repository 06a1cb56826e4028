import { sign } from 'jsonwebtoken';
import { startTestApp, TestApp } from '../support/app';
import { Client, newWorkspace, TestWorkspace, userToken } from '../support/fixtures';
import { closeAllSockets, connectError, connectSocket, sleep, TestSocket } from '../support/socket';

const closed = (s: TestSocket) =>
  new Promise<{ reason: string; at: number }>((resolve) => {
    if (!s.socket.connected) resolve({ reason: 'already', at: Date.now() });
    s.socket.once('disconnect', (reason) => resolve({ reason, at: Date.now() }));
  });

async function issued(ws: TestWorkspace, externalId: string, ttl = 3600): Promise<string> {
  const res = await ws.api.post(`/v1/users/${externalId}/token`, { ttl_seconds: ttl });
  if (res.status !== 200) throw new Error(`token answered ${res.status} ${res.text}`);
  return res.body.token as string;
}

/** Issue 11, finding 5: a live socket holds only while the credentials that opened it do. */
describe('credentials of live sockets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  it('a socket is closed when its token expires, and the token no longer connects', async () => {
    const ws = await newWorkspace(t);
    await ws.user('ana');
    const shortLived = userToken(ws.apiKey, ws.apiSecret, 'ana', 2);
    const longLived = await issued(ws, 'ana');
    const [short, long] = await Promise.all([
      connectSocket(t.baseUrl, shortLived),
      connectSocket(t.baseUrl, longLived),
    ]);
    const exp = (Math.floor(Date.now() / 1000) + 2) * 1000;
    const end = await closed(short);
    expect(end.reason).toBe('io server disconnect');
    expect(end.at).toBeGreaterThanOrEqual(exp - 1000);
    expect(end.at).toBeLessThan(exp + 2000);
    expect(long.socket.connected).toBe(true);
    expect((await connectError(t.baseUrl, shortLived)).data?.error?.code).toBe('UNAUTHORIZED');
  });

  it('deleting a user closes their sockets at once; their old tokens do not work for a new user of the same external id', async () => {
    const ws = await newWorkspace(t);
    const [, bo] = await ws.users('ana', 'bo');
    const fromService = await issued(ws, 'bo');
    // a backend's own token, issued a while ago (iat two minutes back) and still unexpired
    const iat = Math.floor(Date.now() / 1000) - 120;
    const fromBackend = sign({ sub: 'bo', iat, exp: iat + 3600 }, ws.apiSecret, {
      algorithm: 'HS256',
      keyid: ws.apiKey,
    });
    const sockets = await Promise.all([
      connectSocket(t.baseUrl, bo!.token),
      connectSocket(t.baseUrl, fromService),
    ]);
    const anaSocket = await connectSocket(t.baseUrl, userToken(ws.apiKey, ws.apiSecret, 'ana'));
    const ends = sockets.map(closed);
    expect((await ws.api.delete('/v1/users/bo')).status).toBe(204);
    expect((await Promise.all(ends)).map((e) => e.reason)).toEqual([
      'io server disconnect',
      'io server disconnect',
    ]);
    await sleep(100);
    expect(anaSocket.socket.connected).toBe(true);

    expect((await ws.api.put('/v1/users/bo', { name: 'Another Bo' })).status).toBe(201);
    for (const old of [fromService, fromBackend]) {
      const rest = await new Client(t, `Bearer ${old}`).get('/v1/me/channels');
      expect([rest.status, rest.body.error?.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await connectError(t.baseUrl, old)).data?.error?.code).toBe('UNAUTHORIZED');
    }
    // the new Bo's own tokens work, issued or self-signed
    expect((await new Client(t, `Bearer ${await issued(ws, 'bo')}`).get('/v1/me/channels')).status).toBe(200);
    expect((await connectSocket(t.baseUrl, userToken(ws.apiKey, ws.apiSecret, 'bo'))).socket.connected).toBe(
      true,
    );
  });

  it('a socket opened with a rotated-away secret is closed when its grace period ends; one with the new secret stays', async () => {
    const ws = await newWorkspace(t);
    await ws.user('ana');
    const old = await connectSocket(t.baseUrl, userToken(ws.apiKey, ws.apiSecret, 'ana'));
    const end = closed(old);
    const rotated = await ws.api.post('/v1/workspace/rotate-secret', { grace_seconds: 2 });
    expect(rotated.status).toBe(200);
    const started = Date.now();
    const fresh = await connectSocket(
      t.baseUrl,
      userToken(rotated.body.api_key, rotated.body.api_secret, 'ana'),
    );
    await sleep(500);
    expect(old.socket.connected).toBe(true); // within the grace period
    const { reason, at } = await end;
    expect(reason).toBe('io server disconnect');
    expect(at - started).toBeGreaterThan(1000);
    expect(at - started).toBeLessThan(4500);
    expect(fresh.socket.connected).toBe(true);
  });
});
