/**
 * `npx ts-node --transpile-only bench/connect.ts` (needs a build: `npm run build`, or --main=): how long
 * 1,000 sockets take to connect to chat-service (one instance, PostgreSQL + Redis), and how many
 * `presence.changed` events that storm sends, beside the bare Socket.IO floor
 * (/work/shared/perf-floors/sio/server.js, unchanged) run alternately with the same clients.
 *
 * Layouts: `1x1000` (every user in one channel: the worst case for presence, each member a partner of
 * every other) and `10x100` (ten channels of 100, users spread round-robin). Each layout runs
 * --pairs=3 pairs, the order alternating (floor, service, service, floor, …), every run on a freshly
 * started server process.
 *
 * Options: --sockets=1000 --layouts=1x1000,10x100 --pairs=3 --main=dist/main.js
 *   --compare=/path/to/other/dist/main.js (also run that build in every group: before/after)
 *   --cpu-prof (chat-service runs with --cpu-prof; profiles under /tmp/bench-connect-prof-*)
 *   --only=floor,each,batch,before (a subset of the targets)
 *   --floor=/work/shared/perf-floors/sio --no-write
 * Env: BENCH_DATABASE_URL (superuser; a bench_conn_* database is created and dropped), BENCH_REDIS_URL,
 * BENCH_NODE_OPTIONS (NODE_OPTIONS for chat-service, e.g. `-r /path/to/probe.js`).
 * Writes the "Connecting 1,000 sockets: presence" section of docs/BENCHMARKS.md.
 */
import { ChildProcess, execSync, fork, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { sign } from 'jsonwebtoken';
import { Client } from 'pg';
import * as ts from 'typescript';
import {
  API_KEY,
  API_SECRET,
  arg,
  backendApi,
  BENCH_REDIS_URL,
  cpuMs,
  freePort,
  loadAverage,
  machine,
  median,
  PG_ADMIN_URL,
  ROOT,
  writeBenchmarkSection,
} from './lib';
import type { Connected, FromConnectClients, Quiet, Target, ToConnectClients } from './connect/clients';
import { DEFAULT_LARGE_CHANNEL_THRESHOLD } from '../src/workspaces/workspace-settings';
import { processGroup } from './processes';

const SOCKETS = Number(arg('sockets', '1000'));
const LAYOUTS = arg('layouts', '1x1000,10x100').split(',');
const PAIRS = Number(arg('pairs', '3'));
const MAIN = arg('main', join(ROOT, 'dist', 'main.js'));
const COMPARE = arg('compare', '');
const FLOOR = arg('floor', '/work/shared/perf-floors/sio');
const CPU_PROF = process.argv.includes('--cpu-prof');
/** run only these targets (comma-separated: floor, each, batch, before) */
const ONLY = arg('only', '').split(',').filter(Boolean);
const WRITE = !process.argv.includes('--no-write');
const BATCH = 100; // as the floor's clients.js
const QUIET_MS = 1_500;
const QUIET_MAX_MS = 180_000;
/** a partner that connected this much later than a socket must have been announced to it */
const SURELY_AFTER_MS = 1_000;

const ID = randomBytes(4).toString('hex');
const DB_NAME = `bench_conn_${ID}`;
const PREFIX = `benchconn${ID}:`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stdout.write(`[connect ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
const s1 = (ms: number) => (ms / 1000).toFixed(1);

// ---------------------------------------------------------------- processes and cleanup

const { track, stopChild, cleanup, cleanups } = processGroup(log);

function nextMessage<T extends FromConnectClients>(
  child: ChildProcess,
  type: T['type'],
  timeoutMs: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMsg = (m: FromConnectClients) => {
      if (m.type !== type) return;
      done();
      resolve(m as T);
    };
    const onExit = () => {
      done();
      reject(new Error(`clients exited while waiting for ${type}`));
    };
    const t = setTimeout(() => {
      done();
      reject(new Error(`no ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(t);
      child.off('message', onMsg);
      child.off('exit', onExit);
    };
    child.on('message', onMsg);
    child.once('exit', onExit);
  });
}

function transpileHelpers(): string {
  const out = mkdtempSync(join(tmpdir(), 'bench-connect-'));
  cleanups.push(async () => rmSync(out, { recursive: true, force: true }));
  const dir = join(__dirname, 'connect');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(readFileSync(join(dir, f), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    writeFileSync(join(out, f.replace(/\.ts$/, '.js')), outputText);
  }
  return out;
}

const uptime = () => {
  try {
    return execSync('uptime', { encoding: 'utf8' })
      .trim()
      .replace(/^.*load average:\s*/, '');
  } catch {
    return loadAverage();
  }
};

// ---------------------------------------------------------------- PostgreSQL / Redis

async function pgAdmin(sql: string): Promise<void> {
  const c = new Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function freshDatabase(): Promise<string> {
  await pgAdmin(`CREATE DATABASE "${DB_NAME}"`);
  cleanups.push(() => pgAdmin(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${DB_NAME}`;
  return url.toString();
}

async function dropRedisKeys(): Promise<void> {
  const r = new Redis(BENCH_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

// ---------------------------------------------------------------- servers

interface ServerProc {
  url: string;
  child: ChildProcess;
  problems: string[];
}

async function startChat(main: string, env: Record<string, string>, profDir?: string): Promise<ServerProc> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-connect-data-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const args = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, main] : [main];
  const child = track(
    spawn(process.execPath, args, {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        // e.g. `-r ./probe.js` to instrument the service
        ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
        ...env,
        PORT: String(port),
        SERVICE_BASE_URL: url,
        SERVICE_DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const proc: ServerProc = { url, child, problems: [] };
  let tail = '';
  for (const s of [child.stdout!, child.stderr!]) {
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      tail = (tail + d).slice(-4000);
      for (const line of d.split('\n')) {
        const m = /"level":(\d+)/.exec(line);
        if (m && Number(m[1]) >= 40 && proc.problems.length < 20) proc.problems.push(line.slice(0, 300));
      }
    });
  }
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`chat-service exited with ${child.exitCode}: ${tail}`);
    try {
      if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`chat-service not ready: ${tail}`);
    await sleep(100);
  }
  return proc;
}

/** The floor's own server (perf-floors/sio/server.js, mode sio), started as its bench.js starts it. */
async function startFloor(): Promise<ServerProc> {
  const port = await freePort();
  const child = track(
    fork(join(FLOOR, 'server.js'), ['sio', String(port)], {
      execArgv: ['--expose-gc'],
      // the floor's socket.io from this checkout's node_modules (the floor has none installed), as bench/realtime.ts does
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('floor server not ready within 30 s')), 30_000);
    child.on('message', (m: { type?: string }) => {
      if (m?.type === 'listening') {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child, problems: [] };
}

// ---------------------------------------------------------------- data

interface Layout {
  name: string;
  channels: number;
  /** user external ids, index = socket index */
  users: string[];
  /** channel of each user (index into channelIds) */
  channelOf: number[];
  channelIds: string[];
}

function parseLayout(name: string, k: number): Omit<Layout, 'channelIds'> {
  const m = /^(\d+)x(\d+)$/.exec(name);
  if (!m) throw new Error(`bad layout ${name}: want <channels>x<members>`);
  const channels = Number(m[1]);
  if (channels * Number(m[2]) !== SOCKETS) throw new Error(`layout ${name} does not make ${SOCKETS} sockets`);
  const users = Array.from({ length: SOCKETS }, (_, i) => `l${k}-u${String(i).padStart(5, '0')}`);
  // round-robin: every batch of 100 connects reaches every channel, as real traffic would
  return { name, channels, users, channelOf: users.map((_, i) => i % channels) };
}

async function createLayout(base: string, l: Omit<Layout, 'channelIds'>, k: number): Promise<Layout> {
  for (let i = 0; i < l.users.length; i += 100) {
    await backendApi(base, 'POST', '/v1/users', {
      users: l.users.slice(i, i + 100).map((external_id) => ({ external_id, name: external_id })),
    });
  }
  const channelIds: string[] = [];
  for (let c = 0; c < l.channels; c++) {
    const members = l.users.filter((_, i) => l.channelOf[i] === c);
    const created = await backendApi(base, 'POST', '/v1/channels', {
      type: 'group',
      external_id: `bench-l${k}-c${c}`,
      name: `bench ${l.name} #${c}`,
      created_by: members[0],
      member_external_ids: members.slice(1, 500),
    });
    const id = (created.id ?? created.channel?.id) as string;
    for (let i = 500; i < members.length; i += 500)
      await backendApi(base, 'POST', `/v1/channels/${id}/members`, {
        member_external_ids: members.slice(i, i + 500),
      });
    channelIds.push(id);
  }
  return { ...l, channelIds };
}

const userToken = (externalId: string) =>
  sign({ sub: externalId }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY, expiresIn: 3600 });

// ---------------------------------------------------------------- one run

interface TargetSpec {
  name: string;
  /** the build to start; none = the floor */
  main?: string;
  presence?: 'each' | 'batch';
}

interface Run {
  target: string;
  connectMs: number;
  ok: number;
  failed: number;
  /** presence.changed received */
  presence: number;
  /** presence.batch received, and the user entries in them */
  batches: number;
  batchEntries: number;
  presenceDuringConnect: number;
  /** first open → last presence event (connect time if there were none) */
  settledMs: number;
  serverCpuMs: number;
  clientCpuMs: number;
  loadBefore: string;
  loadAfter: string;
  /** (socket, partner) pairs where the partner connected ≥ 1 s later but never showed online */
  missed: number;
  /** (socket, partner) pairs shown offline at the end (nobody went offline) */
  wrongOffline: number;
  malformed: number;
  /** members GET /v1/channels/:id/presence shows online, of SOCKETS */
  restOnline: number;
  other: Record<string, number>;
  problems: string[];
}

async function runOnce(
  spec: TargetSpec,
  helpers: string,
  layout: Layout,
  env: Record<string, string>,
): Promise<Run> {
  const { name: target, main } = spec;
  const isFloor = !main;
  const profDir = CPU_PROF && main ? mkdtempSync(join(tmpdir(), 'bench-connect-prof-')) : undefined;
  const server = isFloor ? await startFloor() : await startChat(main, env, profDir);
  await sleep(1_000);
  const loadBefore = uptime();
  const cpu0 = cpuMs(server.child.pid!);
  const clients = track(
    fork(join(helpers, 'clients.js'), [], {
      env: { PATH: process.env.PATH, NODE_PATH: join(ROOT, 'node_modules') },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const targets: Target[] = layout.users.map((u) => ({
    url: server.url,
    token: isFloor ? undefined : userToken(u),
    presence: spec.presence,
  }));
  const connectedP = nextMessage<Connected>(clients, 'connected', 300_000);
  clients.send({ cmd: 'connect', targets, batch: BATCH } satisfies ToConnectClients);
  const c = await connectedP;
  const quietP = nextMessage<Quiet>(clients, 'quiet', QUIET_MAX_MS + 30_000);
  clients.send({ cmd: 'quiet', quietMs: QUIET_MS, maxMs: QUIET_MAX_MS } satisfies ToConnectClients);
  const q = await quietP;
  const serverCpuMs = cpuMs(server.child.pid!) - cpu0;
  const loadAfter = uptime();

  let missed = 0;
  if (!isFloor) {
    // a large channel carries no presence (CONTRACT §29): partners are counted through small channels only
    const byChannel = layout.channelIds
      .map((_, ch) => layout.users.map((_, i) => i).filter((i) => layout.channelOf[i] === ch))
      .map((members) => (members.length > DEFAULT_LARGE_CHANNEL_THRESHOLD ? [] : members));
    q.seenOnline.forEach((seen, i) => {
      if (c.connectedAt[i]! < 0) return;
      const got = new Set(seen);
      for (const j of byChannel[layout.channelOf[i]!]!) {
        if (j !== i && c.connectedAt[j]! > c.connectedAt[i]! + SURELY_AFTER_MS && !got.has(j)) missed++;
      }
    });
  }
  let restOnline = 0;
  if (!isFloor) {
    for (const id of layout.channelIds) {
      const p = await backendApi(server.url, 'GET', `/v1/channels/${id}/presence?limit=1`);
      restOnline += p.online_count as number;
    }
  }
  const closedP = nextMessage(clients, 'closed', 30_000);
  clients.send({ cmd: 'close' } satisfies ToConnectClients);
  await closedP.catch(() => undefined);
  await stopChild(clients, 5_000);
  await sleep(500);
  await stopChild(server.child);
  if (profDir) log(`  cpu profile of ${target}: ${profDir}`);
  const run: Run = {
    target,
    connectMs: c.ms,
    ok: c.ok,
    failed: c.failed,
    presence: q.presence,
    batches: q.batches,
    batchEntries: q.batchEntries,
    presenceDuringConnect: c.presenceDuringConnect,
    settledMs: Math.max(c.ms, q.lastPresenceMs),
    serverCpuMs,
    clientCpuMs: q.cpuMs,
    loadBefore,
    loadAfter,
    missed,
    wrongOffline: q.seenOffline,
    malformed: q.malformed,
    restOnline,
    other: q.other,
    problems: server.problems,
  };
  log(
    `  ${target.padEnd(20)} connected ${run.ok}/${SOCKETS} in ${run.connectMs} ms (settled ${run.settledMs} ms); presence.changed ${n0(run.presence)}, presence.batch ${n0(run.batches)} (${n0(run.batchEntries)} entries) ` +
      `(${n0(run.presenceDuringConnect)} while connecting); server CPU ${n0(run.serverCpuMs)} ms, clients ${n0(run.clientCpuMs)} ms` +
      (isFloor
        ? ''
        : `; missed ${run.missed}, offline ${run.wrongOffline}, malformed ${run.malformed}, REST online ${run.restOnline}`) +
      `; load ${loadBefore} → ${loadAfter}` +
      (c.failed ? `; FAILED ${c.failed}: ${c.errors.join(' | ')}` : '') +
      (run.problems.length ? `; ${run.problems.length} warnings: ${run.problems[0]}` : ''),
  );
  return run;
}

// ---------------------------------------------------------------- report

interface LayoutResult {
  layout: Layout;
  runs: Run[];
}

const TARGET_NAMES = ['floor', 'chat-service', 'chat-service batch', 'before'];
const targetLabel: Record<string, string> = {
  floor: 'floor (bare Socket.IO)',
  'chat-service': 'chat-service, default clients (`presence.changed`)',
  'chat-service batch': "chat-service, `auth.presence: 'batch'` clients",
  before: 'before this change (default clients)',
};

function section(
  results: LayoutResult[],
  started: Date,
  loadStart: string,
  loadEnd: string,
  minutes: number,
): string {
  const lines: string[] = [
    `Command: \`npx ts-node --transpile-only bench/connect.ts${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}\` (after \`npm run build\`). ` +
      `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${minutes.toFixed(1)} min; machine: ${machine()}; \`uptime\` load average ${loadStart} at the start, ${loadEnd} at the end` +
      (Number(loadStart.split(/[ ,/]+/)[0]) > 1.5 ? ' (**shared with other work: noisy**).' : '.'),
    '',
    `${n0(SOCKETS)} Socket.IO clients in one process of their own connect the way the floor's clients do (\`/work/shared/perf-floors/sio/clients.js\`: websocket transport, ${BATCH} at a time, each batch awaited), ` +
      'with a user JWT each, to one freshly started chat-service instance (`node dist/main.js`, PostgreSQL + Redis adapter), and alternately, with the same client code, to the floor: ' +
      "the floor's own `server.js` (bare `socket.io`, every socket joins one room). " +
      "chat-service runs twice per group: with default clients (the contract's `presence.changed`, one event per user and receiver) and with clients that ask for `presence.batch` at the handshake. " +
      'Every run starts its server afresh; the order within a group alternates. ' +
      '**connect** = first open → last `connect` event; **settled** = first open → last presence event received (announcements are coalesced per 200 ms tick, so some arrive after the last connect); ' +
      `server CPU from \`/proc/<pid>/stat\` over the run. "missed" counts (socket, partner) pairs where the partner connected ≥ ${SURELY_AFTER_MS / 1000} s after the socket but the socket never saw it online, partners through channels that are not large (above ${DEFAULT_LARGE_CHANNEL_THRESHOLD} members a channel carries no presence, CONTRACT §29); ` +
      '"REST online" is the `online_count` of `GET /v1/channels/:id/presence` afterwards, over the channels.' +
      (COMPARE
        ? ` "before" is the build \`${COMPARE}\` (the code before this change), run in the same groups.`
        : ''),
    '',
  ];
  for (const r of results) {
    lines.push(
      `### ${r.layout.channels} channel${r.layout.channels > 1 ? 's' : ''} of ${n0(SOCKETS / r.layout.channels)} (\`${r.layout.name}\`)`,
      '',
    );
    lines.push(
      '| group | target | connect (s) | settled (s) | presence events received (changed + batch) | user changes carried | server CPU (s) | clients CPU (s) | missed | REST online | `uptime` load before → after |',
    );
    lines.push('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    const per = TARGET_NAMES.filter((t) => r.runs.some((x) => x.target === t)).length;
    r.runs.forEach((x, i) => {
      const floor = x.target === 'floor';
      lines.push(
        `| ${Math.floor(i / per) + 1} | ${x.target} | ${s1(x.connectMs)} | ${floor ? '–' : s1(x.settledMs)} | ${floor ? '–' : n0(x.presence + x.batches)} | ${floor ? '–' : n0(x.presence + x.batchEntries)} | ${s1(x.serverCpuMs)} | ${s1(x.clientCpuMs)} | ${floor ? '–' : n0(x.missed)} | ${floor ? '–' : n0(x.restOnline)} | ${x.loadBefore} → ${x.loadAfter} |`,
      );
    });
    const of = (t: string) => r.runs.filter((x) => x.target === t);
    const floor = of('floor');
    lines.push('');
    lines.push(
      `| ${n0(PAIRS)} groups, medians | connect (s) | settled (s) | presence events | server CPU (s) | connect ÷ floor, per group | settled ÷ floor connect, per group |`,
    );
    lines.push('|---|---:|---:|---:|---:|---|---|');
    for (const t of TARGET_NAMES) {
      const xs = of(t);
      if (!xs.length) continue;
      const ratio = (f: (x: Run) => number) => {
        const rs = xs.map((x, k) => f(x) / (floor[k]?.connectMs ?? NaN));
        return `${rs.map((v) => v.toFixed(1)).join(', ')} (median **${median(rs).toFixed(1)}×**)`;
      };
      lines.push(
        `| ${targetLabel[t]} | ${s1(median(xs.map((x) => x.connectMs)))} | ${t === 'floor' ? '–' : s1(median(xs.map((x) => x.settledMs)))} | ${t === 'floor' ? '–' : n0(median(xs.map((x) => x.presence + x.batches)))} | ${s1(median(xs.map((x) => x.serverCpuMs)))} | ` +
          `${t === 'floor' ? '–' : ratio((x) => x.connectMs)} | ${t === 'floor' ? '–' : ratio((x) => x.settledMs)} |`,
      );
    }
    const problems = r.runs.flatMap((x) => x.problems);
    if (problems.length)
      lines.push(
        '',
        `Warnings logged by chat-service: ${problems.length}, e.g. \`${problems[0]!.replace(/`/g, "'")}\`.`,
      );
    const bad = r.runs.filter(
      (x) =>
        x.failed ||
        x.missed ||
        x.wrongOffline ||
        x.malformed ||
        (x.target !== 'floor' && x.restOnline !== SOCKETS),
    );
    lines.push(
      '',
      bad.length
        ? `**Runs with failed connects, missed or wrong presence: ${bad.map((x) => `${x.target} (failed ${x.failed}, missed ${x.missed}, offline ${x.wrongOffline}, malformed ${x.malformed}, REST online ${x.restOnline})`).join('; ')}.**`
        : 'Every run: all sockets connected, no partner missed, no malformed presence event, every member online in `GET /v1/channels/:id/presence`.',
    );
    lines.push('');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = new Date();
  const loadStart = uptime();
  log(`${machine()}; load ${loadStart}; main ${MAIN}${COMPARE ? `, compare ${COMPARE}` : ''}`);
  const helpers = transpileHelpers();
  const dbUrl = await freshDatabase();
  cleanups.push(dropRedisKeys);
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: BENCH_REDIS_URL,
    SERVICE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    SERVICE_BOOTSTRAP_API_KEY: API_KEY,
    SERVICE_BOOTSTRAP_API_SECRET: API_SECRET,
    LOG_LEVEL: 'warn',
    SERVICE_REDIS_PREFIX: PREFIX,
  };
  const setup = await startChat(MAIN, env);
  const layouts: Layout[] = [];
  for (const [k, name] of LAYOUTS.entries()) {
    const t = Date.now();
    layouts.push(await createLayout(setup.url, parseLayout(name, k), k));
    log(`layout ${name}: ${SOCKETS} users in ${layouts[k]!.channels} channel(s), ${Date.now() - t} ms`);
  }
  await stopChild(setup.child);

  const results: LayoutResult[] = [];
  for (const layout of layouts) {
    log(`layout ${layout.name}: ${PAIRS} groups`);
    const runs: Run[] = [];
    for (let p = 0; p < PAIRS; p++) {
      const all: TargetSpec[] = [
        { name: 'floor' },
        { name: 'chat-service', main: MAIN },
        { name: 'chat-service batch', main: MAIN, presence: 'batch' },
        ...(COMPARE ? [{ name: 'before', main: COMPARE }] : []),
      ];
      const group = all.filter(
        (g) =>
          !ONLY.length ||
          ONLY.includes(g.name === 'floor' || g.name === 'before' ? g.name : (g.presence ?? 'each')),
      );
      if (p % 2) group.reverse();
      const got: Run[] = [];
      for (const spec of group) got.push(await runOnce(spec, helpers, layout, env));
      // the table keeps one order per group
      runs.push(...TARGET_NAMES.map((t) => got.find((x) => x.target === t)).filter((x): x is Run => !!x));
    }
    results.push({ layout, runs });
  }
  const text = section(results, started, loadStart, uptime(), (Date.now() - started.getTime()) / 60_000);
  process.stdout.write(`\n${text}\n`);
  if (WRITE) log(`wrote ${writeBenchmarkSection('Connecting 1,000 sockets: presence', text)}`);
}

main()
  .catch((e: unknown) => {
    log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exitCode = 1;
  })
  .finally(() => void cleanup());
