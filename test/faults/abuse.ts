import { closeAllSockets, connectSocket, TestSocket } from '../support/socket';
import { call, ChatRoom, chatRoom, p99, Reply, send } from './support/chat';
import { FaultEnvironment, runScript, sleep } from './support/processes';

const FLOOD_MS = 15_000;

interface FloodReport {
  emitted: number;
  acks: Record<string, number>;
  connects: number;
  disconnects: Record<string, number>;
  connectErrors: Record<string, number>;
}

/** The flooder as a process of its own: its busy loop must not slow the measurements made here. */
function flood(
  baseUrl: string,
  token: string,
  channelId: string,
  sockets: number,
  ms: number,
): Promise<FloodReport> {
  return runScript<FloodReport>('flooder.ts', [baseUrl, token, channelId, String(sockets), String(ms)]);
}

const closedWith = (s: TestSocket) =>
  new Promise<{ reason: string; at: number }>((resolve) => {
    if (!s.socket.connected) resolve({ reason: 'already', at: Date.now() });
    s.socket.once('disconnect', (reason) => resolve({ reason, at: Date.now() }));
  });

/** Issue 11, findings 2 and 5, on two API instances and a worker: one user cannot stall an instance; sockets die with their tokens. */
export function abuse(environment: () => FaultEnvironment): void {
  describe('abuse', () => {
    let env: FaultEnvironment;
    let room: ChatRoom;

    beforeAll(async () => {
      env = environment();
      room = await chatRoom(env, env.apis[0], ['ana', 'bo', 'mallory']);
    });
    afterEach(() => closeAllSockets());

    it('closes a socket when its token expires, on each instance', async () => {
      const bo = room.users[1]!;
      const short = room.tokenFor(bo.externalId, 6); // exp = iat + 6 with iat rounded down: 5 to 6 s from now
      const opened = Date.now();
      const expiring = await Promise.all(env.apis.map((api) => connectSocket(api.baseUrl, short)));
      const lasting = await Promise.all(env.apis.map((api) => connectSocket(api.baseUrl, bo.token)));
      const closes = expiring.map(closedWith);
      // working until then
      for (const s of expiring)
        expect((await s.emitAck('typing.start', { channel_id: room.channelId })).ok).toBe(true);

      const closed = await Promise.all(closes);
      for (const c of closed) {
        expect(c.reason).toBe('io server disconnect');
        // not before the token's expiry, and soon after it (a busy machine delays timers)
        expect(c.at - opened).toBeGreaterThanOrEqual(5_000);
        expect(c.at - opened).toBeLessThan(16_000);
      }
      for (const s of lasting) expect(s.socket.connected).toBe(true);
      env.expectAllAlive();
    });

    it("a flooding socket leaves another user's sends fast (p99 under 2 s) and /readyz green on its instance", async () => {
      const [api] = env.apis;
      const [ana, , mallory] = room.users as [
        ChatRoom['users'][number],
        ChatRoom['users'][number],
        ChatRoom['users'][number],
      ];
      // unloaded first, for the record (a busy machine shows in both)
      const baseline: number[] = [];
      for (let i = 0; i < 8; i++) baseline.push((await send(api, room, ana, `baseline ${i}`)).ms);
      const flooding = flood(api.baseUrl, mallory.token, room.channelId, 2, FLOOD_MS);
      await sleep(1_500); // the flood is on

      const sends: Reply[] = [];
      const probes: Reply[] = [];
      const deadline = Date.now() + FLOOD_MS - 3_000;
      await Promise.all([
        (async () => {
          for (let i = 0; Date.now() < deadline; i++) {
            sends.push(await send(api, room, ana, `still here ${i}`));
            await sleep(250);
          }
        })(),
        (async () => {
          while (Date.now() < deadline) {
            probes.push(await call(api, 'GET', '/readyz', null));
            await sleep(500);
          }
        })(),
      ]);
      const report = await flooding;
      env.expectAllAlive();

      // the flood was real: thousands of events, refused beyond the budget, its sockets closed for it
      expect(report.emitted).toBeGreaterThan(3_000);
      expect(report.acks['message.send RATE_LIMITED'] ?? 0).toBeGreaterThan(0);
      expect(report.disconnects['io server disconnect'] ?? 0).toBeGreaterThan(0);
      expect(report.connectErrors.RATE_LIMITED ?? 0).toBeGreaterThan(0); // reconnecting bought no fresh budget
      // and the other user was served meanwhile
      expect(
        sends.filter((r) => r.status !== 201).map((r) => `${r.status} ${JSON.stringify(r.body)}`),
      ).toEqual([]);
      expect(sends.length).toBeGreaterThan(10);
      const latencies = sends.map((r) => r.ms).sort((x, y) => x - y);
      if (p99(latencies) >= 2_000)
        throw new Error(
          `p99 ${p99(latencies)} ms under the flood (ms, in order: ${sends.map((r) => r.ms).join(' ')}; unloaded: ${baseline.join(' ')})`,
        );
      expect(
        probes.filter((r) => r.status !== 200).map((r) => `${r.status} ${JSON.stringify(r.body)}`),
      ).toEqual([]);
    });
  });
}
