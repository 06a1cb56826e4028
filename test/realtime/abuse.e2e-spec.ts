import { room, send } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

const closed = (s: TestSocket) =>
  new Promise<string>((resolve) => {
    if (!s.socket.connected) resolve('already');
    s.socket.once('disconnect', (reason) => resolve(reason));
  });

/** Issue 11, finding 2: one user cannot stall an instance for everyone. */
describe('socket budgets and the per-user socket cap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_SOCKET_EVENTS_PER_SECOND: '10', SERVICE_SOCKETS_PER_USER: '3' });
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  it('refuses events beyond the budget with RATE_LIMITED before reading them, and closes a socket that keeps flooding', async () => {
    const { ch, ana, bo } = await room(t);
    const flood = await connectSocket(t.baseUrl, bo.token);
    const end = closed(flood);
    const acks: { ok: boolean; error?: { code: string } }[] = [];
    // the burst (20) and what refills meanwhile (10/s) are answered, the rest refused without being read
    const started = Date.now();
    for (let i = 0; i < 60; i++)
      flood.socket.emit('channel.read', { channel_id: ch.id }, (a: (typeof acks)[number]) => acks.push(a));
    for (let waited = 0; acks.length < 60 && waited < 15_000; waited += 20) await sleep(20);
    const seconds = (Date.now() - started) / 1000;
    expect(acks).toHaveLength(60);
    // however slowly a busy machine delivers the emits: the burst, plus what refilled meanwhile
    const served = acks.filter((a) => a.ok).length;
    expect(served).toBeGreaterThanOrEqual(20);
    expect(served).toBeLessThanOrEqual(Math.min(59, 20 + Math.ceil(10 * seconds)));
    expect(new Set(acks.filter((a) => !a.ok).map((a) => a.error?.code))).toEqual(new Set(['RATE_LIMITED']));
    // another user is served meanwhile, and the instance reports ready
    const other = await send(ana, ch.id, 'still served');
    expect(other.content).toBe('still served');
    expect((await t.http().get('/readyz')).status).toBe(200);

    for (let i = 0; i < 2000 && flood.socket.connected; i++)
      flood.socket.emit('typing.start', { channel_id: ch.id });
    expect(await end).toBe('io server disconnect');
  });

  it("a user's sockets beyond the cap close the oldest", async () => {
    const { bo } = await room(t);
    const first = await connectSocket(t.baseUrl, bo.token);
    const firstClosed = closed(first);
    const rest = [];
    for (let i = 0; i < 3; i++) rest.push(await connectSocket(t.baseUrl, bo.token));
    expect(await firstClosed).toBe('io server disconnect');
    await sleep(100);
    expect(rest.map((s) => s.socket.connected)).toEqual([true, true, true]);
  });
});
