import http from 'http';
import { io } from 'socket.io-client';
import { call, chatRoom, ChatUser } from './support/chat';
import { FaultEnvironment, poll, ServiceProcess, sleep, startEnvironment } from './support/processes';

/**
 * Issue 15: a rolling deploy loses nothing. Two API instances and a worker on PostgreSQL + Redis of our
 * own, 200 sockets and a steady send load through a small load balancer that routes by /readyz, as a
 * Kubernetes Service does; each instance is replaced in turn the way a rolling update does it (the new
 * pod ready first, then SIGTERM to the old one, SIGKILL when its grace period is over).
 */

/** after SIGTERM, the instances still serve this long while /readyz says 503 (for this load balancer) */
const SHUTDOWN_DELAY_SECONDS = 2;
/** the grace period, as the chart requires it: the delay, the service's 10 s drain deadline, a margin */
const GRACE_MS = (SHUTDOWN_DELAY_SECONDS + 10 + 5) * 1000;

describe('a rolling deploy (issue 15)', () => {
  let env: FaultEnvironment | undefined;

  beforeAll(async () => {
    // the load is many sends per user: not the rate limit under test
    env = await startEnvironment({
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      SERVICE_SOCKET_EVENTS_PER_SECOND: '1000',
      SERVICE_SHUTDOWN_DELAY_SECONDS: String(SHUTDOWN_DELAY_SECONDS),
    });
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('SIGTERM: /readyz says 503 at once while the instance still serves, then keep-alive clients are told to close, sockets to go, and the process exits by itself', async () => {
    const e = env!;
    const room = await chatRoom(e, e.apis[0], ['ana', 'bo']);
    const [ana] = room.users as [ChatUser];
    const one = await ServiceProcess.start('api-x', e.apis[0].env);
    const socket = io(one.baseUrl, {
      transports: ['websocket'],
      auth: { token: ana.token },
      reconnection: false,
    });
    const told = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // a keep-alive client that never lets its connection go idle (a load balancer's upstream pool)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const answers: { status: number; connection: string | undefined; after: boolean }[] = [];
    let signalled = false;
    let hogging = true;
    const hog = (async () => {
      while (hogging) {
        const answer = await new Promise<{ status: number; connection: string | undefined } | null>(
          (resolve) =>
            http
              .get(`${one.baseUrl}/healthz`, { agent }, (res) => {
                res.resume();
                res.once('end', () =>
                  resolve({ status: res.statusCode!, connection: res.headers.connection }),
                );
              })
              .once('error', () => resolve(null)),
        );
        if (!answer) break; // the instance has gone
        answers.push({ ...answer, after: signalled });
        await sleep(20);
      }
    })();
    try {
      await sleep(300);
      signalled = true;
      const ended = one.terminate(GRACE_MS);
      // not ready at once, yet still serving: a send through it is stored
      await poll(
        '/readyz 503 after SIGTERM',
        async () => (await call(one, 'GET', '/readyz', null)).status === 503,
        1_000,
        50,
      );
      const sent = await call(one, 'POST', `/v1/channels/${room.channelId}/messages`, ana.auth, {
        content: 'draining',
      });
      expect(sent.status).toBe(201);
      // then the sockets are told to go (a client reconnects elsewhere), and the process exits cleanly
      expect(await told).toBe('io server disconnect');
      const { exit, killed } = await ended;
      expect({ code: exit.code, signal: exit.signal, killed }).toEqual({
        code: 0,
        signal: null,
        killed: false,
      });
    } finally {
      hogging = false;
      await hog;
      socket.close();
      agent.destroy();
      await one.stop();
    }
    // the keep-alive client was answered throughout, and told to close its connection once the shutdown began
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => !a.after).length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.after).map((a) => a.connection)).toContain('close');
    expect(answers.filter((a) => !a.after && a.connection === 'close')).toEqual([]);
  });
});
