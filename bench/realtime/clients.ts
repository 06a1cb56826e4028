/**
 * The client side of bench/realtime.ts, in its own process (forked by the parent, driven over IPC):
 * opens the sockets, counts `message.new` events and measures receipt latency from the send time the
 * parent put in the content (`bench:<sentAtMs>:<phase>:<n>`).
 */
import { io, Socket } from 'socket.io-client';
import type { FromClients, SocketTarget, ToClients } from './protocol';

const MAX_MS = 60_000;

const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const send = (m: FromClients) => process.send?.(m);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let sockets: Socket[] = [];
let servers: (0 | 1)[] = [];
let disconnects = 0;
let lastEventAt = Date.now();
let events = 0;
const byName: Record<string, number> = {};

interface Phase {
  phase: number;
  messages: number;
  seen: Uint8Array;
  lastN: Int32Array;
  hist: [Uint32Array, Uint32Array];
  received: number;
  unique: number;
  duplicates: number;
  outOfOrder: number;
  stale: number;
  firstAt: number;
  lastAt: number;
  payloadBytes: number;
  sample: string;
  cpuAt: number;
}
let cur: Phase | null = null;
const lateByPhase: Record<number, number> = {};
let lastSeq = new Int32Array(0);
let seqBackwards = 0;
let seqJumps = 0;

function onMessage(i: number, env: unknown): void {
  const now = Date.now();
  const e = env as { data?: { content?: unknown }; content?: unknown; seq?: unknown } | null;
  if (typeof e?.seq === 'number') {
    const prev = lastSeq[i]!;
    if (prev && e.seq <= prev) seqBackwards++;
    else if (prev && e.seq > prev + 1) seqJumps++;
    lastSeq[i] = Math.max(prev, e.seq);
  }
  const content = e?.data?.content ?? e?.content;
  if (typeof content !== 'string' || !content.startsWith('bench:') || !cur) return;
  const [, sentAtS, phaseS, nS] = content.split(':');
  if (Number(phaseS) !== cur.phase) {
    cur.stale++;
    lateByPhase[Number(phaseS)] = (lateByPhase[Number(phaseS)] ?? 0) + 1;
    return;
  }
  const n = Number(nS);
  const sentAt = Number(sentAtS);
  const p = cur;
  p.received++;
  if (!p.firstAt) {
    p.firstAt = now;
    p.sample = JSON.stringify(env);
    p.payloadBytes = Buffer.byteLength(p.sample);
  }
  p.lastAt = now;
  if (n >= 0 && n < p.messages) {
    const k = i * p.messages + n;
    if (p.seen[k]) p.duplicates++;
    else {
      p.seen[k] = 1;
      p.unique++;
    }
  }
  if (n < p.lastN[i]!) p.outOfOrder++;
  p.lastN[i] = n;
  p.hist[servers[i]!][Math.min(MAX_MS, Math.max(0, now - sentAt))]!++;
}

function openOne(t: SocketTarget, i: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = io(t.url, {
      transports: ['websocket'],
      auth: t.token ? { token: t.token } : {},
      forceNew: true,
      reconnection: false,
      timeout: timeoutMs,
    });
    const fail = (err: Error) => {
      s.close();
      reject(err);
    };
    s.once('connect_error', fail);
    s.once('connect', () => {
      s.off('connect_error', fail);
      s.on('message.new', (env: unknown) => onMessage(i, env));
      s.onAny((name: string) => {
        events++;
        byName[name] = (byName[name] ?? 0) + 1;
        lastEventAt = Date.now();
      });
      s.on('disconnect', () => disconnects++);
      resolve(s);
    });
  });
}

async function connectAll(targets: SocketTarget[], concurrency: number, timeoutMs: number): Promise<void> {
  const started = Date.now();
  const cpu0 = cpuMicros();
  sockets = new Array<Socket>(targets.length);
  servers = targets.map((t) => t.server);
  lastSeq = new Int32Array(targets.length);
  const errors: string[] = [];
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      for (let attempt = 1; ; attempt++) {
        try {
          sockets[i] = await openOne(targets[i]!, i, timeoutMs);
          break;
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          if (attempt >= 3) {
            failed++;
            if (errors.length < 5) errors.push(msg);
            break;
          }
          await sleep(250 * attempt);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ok = sockets.filter(Boolean);
  const perServer: [number, number] = [0, 0];
  sockets.forEach((s, i) => s && perServer[servers[i]!]++);
  send({
    type: 'connected',
    ok: ok.length,
    failed,
    errors,
    ms: Date.now() - started,
    perServer,
    cpuMs: (cpuMicros() - cpu0) / 1000,
    byName: { ...byName },
  });
}

async function quiet(quietMs: number, maxMs: number): Promise<void> {
  const started = Date.now();
  const before = events;
  const names = { ...byName };
  while (Date.now() - lastEventAt < quietMs && Date.now() - started < maxMs) await sleep(100);
  const delta: Record<string, number> = {};
  for (const [k, v] of Object.entries(byName)) if (v - (names[k] ?? 0)) delta[k] = v - (names[k] ?? 0);
  send({ type: 'quiet', ms: Date.now() - started, events: events - before, byName: delta });
}

function sparse(h: Uint32Array): [number, number][] {
  const out: [number, number][] = [];
  h.forEach((n, ms) => n && out.push([ms, n]));
  return out;
}

function report(failed: number[]): void {
  const p = cur!;
  const skip = new Set(failed);
  const missingPerServer: [number, number] = [0, 0];
  const lostEverywhere: number[] = [];
  for (let n = 0; n < p.messages && lostEverywhere.length < 5_000; n++) {
    if (skip.has(n)) continue;
    let got = false;
    for (let i = 0; i < sockets.length && !got; i++) if (sockets[i] && p.seen[i * p.messages + n]) got = true;
    if (!got) lostEverywhere.push(n);
  }
  for (let i = 0; i < sockets.length; i++) {
    if (!sockets[i]) continue;
    for (let n = 0; n < p.messages; n++)
      if (!skip.has(n) && !p.seen[i * p.messages + n]) missingPerServer[servers[i]!]++;
  }
  send({
    type: 'report',
    phase: p.phase,
    received: p.received,
    unique: p.unique,
    duplicates: p.duplicates,
    outOfOrder: p.outOfOrder,
    stale: p.stale,
    firstAt: p.firstAt,
    lastAt: p.lastAt,
    hist: [sparse(p.hist[0]), sparse(p.hist[1])],
    missingPerServer,
    disconnects,
    payloadBytes: p.payloadBytes,
    sample: p.sample,
    seqBackwards,
    seqJumps,
    lostEverywhere,
    lateByPhase,
    cpuMs: (cpuMicros() - p.cpuAt) / 1000,
  });
}

process.on('message', (m: ToClients) => {
  switch (m.cmd) {
    case 'connect':
      void connectAll(m.targets, m.concurrency, m.timeoutMs);
      break;
    case 'quiet':
      void quiet(m.quietMs, m.maxMs);
      break;
    case 'phase':
      cur = {
        phase: m.phase,
        messages: m.messages,
        seen: new Uint8Array(sockets.length * m.messages),
        lastN: new Int32Array(sockets.length).fill(-1),
        hist: [new Uint32Array(MAX_MS + 1), new Uint32Array(MAX_MS + 1)],
        received: 0,
        unique: 0,
        duplicates: 0,
        outOfOrder: 0,
        stale: 0,
        firstAt: 0,
        lastAt: 0,
        payloadBytes: 0,
        sample: '',
        cpuAt: cpuMicros(),
      };
      send({ type: 'phase-ready', phase: m.phase });
      break;
    case 'count':
      send({ type: 'count', unique: cur?.unique ?? 0 });
      break;
    case 'report':
      report(m.failed);
      break;
    case 'close':
      for (const s of sockets) s?.disconnect();
      send({ type: 'closed' });
      setTimeout(() => process.exit(0), 200);
      break;
  }
});
// the parent went away: stop
process.on('disconnect', () => process.exit(0));
