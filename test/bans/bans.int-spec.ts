import { startTwoInstances, TestApp } from '../support/app';
import { Client, newWorkspace } from '../support/fixtures';
import { group, send } from '../messages/helpers';
import { closeAllSockets, connectError, connectSocket, sleep, TestSocket } from '../support/socket';

const closed = (s: TestSocket) =>
  new Promise<string>((resolve) => {
    if (!s.socket.connected) resolve('already');
    s.socket.once('disconnect', (reason) => resolve(reason));
  });

/** CONTRACT §19 across instances (PostgreSQL + Redis): a workspace ban closes the user's sockets everywhere at once. */
describe('bans on two instances', () => {
  let one: TestApp;
  let two: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ one, two, close } = await startTwoInstances('ban'));
  });
  afterAll(async () => {
    closeAllSockets();
    await close();
  });

  it("a workspace ban through one instance disconnects the user's sockets on both, refuses new ones on both, and nobody else's", async () => {
    const ws = await newWorkspace(one);
    const [, bo, cy] = await ws.users('ana', 'bo', 'cy');
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    const sockets = await Promise.all([
      connectSocket(one.baseUrl, bo!.token),
      connectSocket(two.baseUrl, bo!.token),
      connectSocket(two.baseUrl, bo!.token),
    ]);
    const cySockets = await Promise.all([
      connectSocket(one.baseUrl, cy!.token),
      connectSocket(two.baseUrl, cy!.token),
    ]);
    const gone = sockets.map(closed);

    const started = Date.now();
    expect((await ws.api.post('/v1/users/bo/ban', { reason: 'abuse' })).status).toBe(200);
    expect(await Promise.all(gone)).toEqual([
      'io server disconnect',
      'io server disconnect',
      'io server disconnect',
    ]);
    expect(Date.now() - started).toBeLessThan(5000);

    for (const app of [one, two]) {
      const refused = await connectError(app.baseUrl, bo!.token);
      expect(refused.data?.error?.code).toBe('BANNED');
    }
    // cy is untouched and still hears the channel, on both instances
    const m = await send(cy!, ch.id, 'still here');
    for (const s of cySockets) {
      expect(s.socket.connected).toBe(true);
      await s.waitFor('message.new', (e) => e.data.id === m.id);
    }

    // lifted through the other instance: bo connects again on both
    const backendViaTwo = new Client(two, `Bearer ${ws.apiKey}:${ws.apiSecret}`);
    expect((await backendViaTwo.delete('/v1/users/bo/ban')).status).toBe(204);
    await sleep(50);
    for (const app of [one, two])
      expect((await connectSocket(app.baseUrl, bo!.token)).socket.connected).toBe(true);
  });
});
