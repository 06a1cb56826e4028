import { room } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { closeAllSockets, connectError, connectSocket, sleep, TestSocket } from '../support/socket';

const closed = (s: TestSocket) =>
  new Promise<string>((resolve) => {
    if (!s.socket.connected) resolve('already');
    s.socket.once('disconnect', (reason) => resolve(reason));
  });

type AckBody = { ok: boolean; error?: { code: string } };

/** Issue 11, finding 2: the budget is the user's too, so more sockets or a reconnect buy no fresh one. */
describe("a user's budget of client events", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_SOCKET_EVENTS_PER_SECOND: '5' });
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });
  afterEach(() => closeAllSockets());

  it("is shared by the user's sockets", async () => {
    const { ch, bo } = await room(t);
    const sockets = await Promise.all([0, 1, 2].map(() => connectSocket(t.baseUrl, bo.token)));
    const acks: AckBody[] = [];
    const started = Date.now();
    // each socket alone stays within the burst (10); together they send three times it
    for (const s of sockets)
      for (let i = 0; i < 10; i++)
        s.socket.emit('channel.read', { channel_id: ch.id }, (a: AckBody) => acks.push(a));
    for (let waited = 0; acks.length < 30 && waited < 15_000; waited += 20) await sleep(20);
    const seconds = (Date.now() - started) / 1000;
    expect(acks).toHaveLength(30);
    const served = acks.filter((a) => a.ok).length;
    expect(served).toBeGreaterThanOrEqual(10);
    expect(served).toBeLessThanOrEqual(Math.min(29, 10 + Math.ceil(5 * seconds)));
    expect(new Set(acks.filter((a) => !a.ok).map((a) => a.error?.code))).toEqual(new Set(['RATE_LIMITED']));
  });

  it('is not refilled by reconnecting: a user whose socket was closed for flooding is refused at the handshake for a while', async () => {
    const { ch, bo, ana } = await room(t);
    const flood = await connectSocket(t.baseUrl, bo.token);
    const end = closed(flood);
    for (let i = 0; i < 2000 && flood.socket.connected; i++)
      flood.socket.emit('typing.start', { channel_id: ch.id });
    expect(await end).toBe('io server disconnect');
    const refused = await connectError(t.baseUrl, bo.token);
    expect(refused.data?.error?.code).toBe('RATE_LIMITED');
    // another user of the same instance connects and is served as usual
    const other = await connectSocket(t.baseUrl, ana.token);
    expect((await other.emitAck('channel.read', { channel_id: ch.id })).ok).toBe(true);
  });
});
