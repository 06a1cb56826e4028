/**
 * The Socket.IO clients of bench/compare.ts's connect scenario, in a process of their own (forked,
 * driven over IPC). Opens N websocket-transport clients the way /work/shared/perf-floors/sio/clients.js
 * does (batches of 100 opened together, reconnection off), against the bare Socket.IO floor or the
 * service (with a user token per client in `auth.token`), and reports how long it took.
 */
import { io, Socket } from 'socket.io-client';

export type ToSockets =
  | { cmd: 'connect'; url: string; n: number; tokens: string[] | null; batch: number; timeoutMs: number }
  | { cmd: 'close' };
export type FromSockets =
  | { type: 'connected'; ok: number; failed: number; ms: number; errors: string[]; events: number }
  | { type: 'closed'; events: number };

let sockets: Socket[] = [];
let events = 0;
const send = (m: FromSockets) => process.send?.(m);

function open(url: string, token: string | null, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = io(url, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      timeout: timeoutMs,
      auth: token ? { token } : {},
    });
    s.onAny(() => events++);
    s.once('connect', () => resolve(s));
    s.once('connect_error', (e: Error) => {
      s.close();
      reject(e);
    });
  });
}

async function connect(m: Extract<ToSockets, { cmd: 'connect' }>): Promise<void> {
  events = 0;
  const errors: string[] = [];
  let failed = 0;
  const t0 = performance.now();
  for (let i = 0; i < m.n; i += m.batch) {
    const batch = Array.from({ length: Math.min(m.batch, m.n - i) }, (_, k) =>
      open(m.url, m.tokens?.[i + k] ?? null, m.timeoutMs),
    );
    for (const r of await Promise.allSettled(batch)) {
      if (r.status === 'fulfilled') sockets.push(r.value);
      else {
        failed++;
        if (errors.length < 5) errors.push(String(r.reason));
      }
    }
  }
  send({ type: 'connected', ok: sockets.length, failed, ms: performance.now() - t0, errors, events });
}

process.on('message', (m: ToSockets) => {
  if (m.cmd === 'connect') {
    connect(m).catch((e: unknown) =>
      send({
        type: 'connected',
        ok: sockets.length,
        failed: m.n - sockets.length,
        ms: NaN,
        errors: [String(e)],
        events,
      }),
    );
  } else {
    for (const s of sockets) s.close();
    sockets = [];
    send({ type: 'closed', events });
  }
});
process.on('disconnect', () => process.exit(0));
