/**
 * The client side of bench/connect.ts, in a process of its own (forked, driven over IPC). It opens the
 * sockets exactly as the floor's clients do (/work/shared/perf-floors/sio/clients.js: websocket only,
 * 100 at a time, each batch waited for), with a user token when one is given, and counts the
 * presence events every socket receives (`presence.changed`, or `presence.batch` for sockets that
 * connect with `auth.presence: 'batch'`): when they arrived, and the last state each socket saw for
 * each user, so the parent can check that nobody missed a partner coming online.
 */
import { io, Socket } from 'socket.io-client';

export interface Target {
  url: string;
  token?: string;
  /** chat-service's presence mode for this socket (auth.presence); unset = the default */
  presence?: 'each' | 'batch' | 'none';
}

export type ToConnectClients =
  | { cmd: 'connect'; targets: Target[]; batch: number }
  | { cmd: 'quiet'; quietMs: number; maxMs: number }
  | { cmd: 'close' };

export interface Connected {
  type: 'connected';
  ok: number;
  failed: number;
  errors: string[];
  /** first open to the last `connect`, ms */
  ms: number;
  /** per socket: ms from the first open to its `connect` (-1: failed) */
  connectedAt: number[];
  /** presence.changed + presence.batch received until the last socket connected */
  presenceDuringConnect: number;
}

export interface Quiet {
  type: 'quiet';
  /** presence.changed received in total */
  presence: number;
  /** presence.batch received, and the user entries they carried */
  batches: number;
  batchEntries: number;
  /** user changes received (presence.changed + batch entries), online / offline */
  online: number;
  offline: number;
  /** ms from the first open to the last presence event (0: none) */
  lastPresenceMs: number;
  /** other events, by name */
  other: Record<string, number>;
  /** per socket, the users (by index) whose last presence.changed said online, as index lists */
  seenOnline: number[][];
  /** (socket, user) pairs whose last presence.changed said offline */
  seenOffline: number;
  /** envelopes without the contract's shape {v: 1, type, data: {external_id, online, last_seen_at}, ts} (batched: data {online: [external_id], offline: [{external_id, last_seen_at}]}) */
  malformed: number;
  cpuMs: number;
}

export type FromConnectClients = Connected | Quiet | { type: 'closed' };

const send = (m: FromConnectClients) => process.send?.(m);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

let sockets: Socket[] = [];
let t0 = 0;
let presence = 0;
let batches = 0;
let batchEntries = 0;
let online = 0;
let offline = 0;
let malformed = 0;
let lastPresenceAt = 0;
let lastEventAt = 0;
const other: Record<string, number> = {};
/** per socket: user index → last state seen (true online, false offline) */
let state: Map<number, boolean>[] = [];
let cpu0 = cpuMicros();

/** bench users are `bench-u00042`: their index */
const indexOf = (externalId: string) => Number(/(\d+)$/.exec(externalId)?.[1] ?? -1);

function change(
  i: number,
  d: { external_id?: unknown; online?: unknown; last_seen_at?: unknown } | undefined,
): boolean {
  if (typeof d?.external_id !== 'string' || typeof d.online !== 'boolean' || !('last_seen_at' in d))
    return false;
  if (d.online) online++;
  else offline++;
  state[i]!.set(indexOf(d.external_id), d.online);
  return true;
}

function onPresence(i: number, env: unknown): void {
  presence++;
  lastPresenceAt = lastEventAt = Date.now();
  const e = env as {
    v?: unknown;
    type?: unknown;
    data?: { external_id?: unknown; online?: unknown; last_seen_at?: unknown };
    ts?: unknown;
  } | null;
  if (e?.v !== 1 || e.type !== 'presence.changed' || typeof e.ts !== 'string' || !change(i, e.data))
    malformed++;
}

function onBatch(i: number, env: unknown): void {
  batches++;
  lastPresenceAt = lastEventAt = Date.now();
  const e = env as {
    v?: unknown;
    type?: unknown;
    data?: { online?: unknown; offline?: unknown };
    ts?: unknown;
  } | null;
  const { online: on, offline: off } = e?.data ?? {};
  if (
    e?.v !== 1 ||
    e.type !== 'presence.batch' ||
    typeof e.ts !== 'string' ||
    !Array.isArray(on) ||
    !Array.isArray(off)
  ) {
    malformed++;
    return;
  }
  for (const u of on) {
    batchEntries++;
    if (!change(i, { external_id: u, online: true, last_seen_at: null })) malformed++;
  }
  for (const u of off as { external_id?: unknown; last_seen_at?: unknown }[]) {
    batchEntries++;
    if (typeof u?.last_seen_at !== 'string' || !change(i, { ...u, online: false })) malformed++;
  }
}

function openOne(t: Target, i: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const auth = t.token ? { token: t.token, ...(t.presence ? { presence: t.presence } : {}) } : {};
    const s = io(t.url, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
    s.on('presence.changed', (env: unknown) => onPresence(i, env));
    s.on('presence.batch', (env: unknown) => onBatch(i, env));
    s.onAny((name: string) => {
      if (name === 'presence.changed' || name === 'presence.batch') return;
      other[name] = (other[name] ?? 0) + 1;
      lastEventAt = Date.now();
    });
    s.once('connect', () => resolve(s));
    s.once('connect_error', (err: Error) => {
      s.close();
      reject(err);
    });
  });
}

async function connectAll(targets: Target[], batch: number): Promise<void> {
  sockets = new Array<Socket>(targets.length);
  state = targets.map(() => new Map());
  const connectedAt = new Array<number>(targets.length).fill(-1);
  const errors: string[] = [];
  let failed = 0;
  cpu0 = cpuMicros();
  t0 = Date.now();
  for (let i = 0; i < targets.length; i += batch) {
    await Promise.all(
      targets.slice(i, i + batch).map((t, k) =>
        openOne(t, i + k).then(
          (s) => {
            sockets[i + k] = s;
            connectedAt[i + k] = Date.now() - t0;
          },
          (e: unknown) => {
            failed++;
            if (errors.length < 5) errors.push(e instanceof Error ? e.message : String(e));
          },
        ),
      ),
    );
  }
  const ms = Date.now() - t0;
  send({
    type: 'connected',
    ok: targets.length - failed,
    failed,
    errors,
    ms,
    connectedAt,
    presenceDuringConnect: presence + batches,
  });
}

async function quiet(quietMs: number, maxMs: number): Promise<void> {
  const started = Date.now();
  lastEventAt = Math.max(lastEventAt, started);
  while (Date.now() - lastEventAt < quietMs && Date.now() - started < maxMs) await sleep(50);
  let seenOffline = 0;
  const seenOnline = state.map((m) => {
    const on: number[] = [];
    for (const [u, v] of m) {
      if (v) on.push(u);
      else seenOffline++;
    }
    return on;
  });
  send({
    type: 'quiet',
    presence,
    batches,
    batchEntries,
    online,
    offline,
    lastPresenceMs: lastPresenceAt ? lastPresenceAt - t0 : 0,
    other: { ...other },
    seenOnline,
    seenOffline,
    malformed,
    cpuMs: (cpuMicros() - cpu0) / 1000,
  });
}

process.on('message', (m: ToConnectClients) => {
  switch (m.cmd) {
    case 'connect':
      void connectAll(m.targets, m.batch);
      break;
    case 'quiet':
      void quiet(m.quietMs, m.maxMs);
      break;
    case 'close':
      for (const s of sockets) s?.disconnect();
      send({ type: 'closed' });
      setTimeout(() => process.exit(0), 200);
      break;
  }
});
process.on('disconnect', () => process.exit(0));
