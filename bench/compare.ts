/**
 * `npm run bench:compare`: the service beside the raw floor (/work/shared/perf-floors), in the same run,
 * on the same (private) PostgreSQL, alternating floor and service runs (A/B, then B/A, ... `--pairs`).
 * The machine is shared and noisy: the figures that count are the ratios from alternated runs and the
 * per-request costs (Node CPU, PostgreSQL CPU and statements per request), not the absolute rates.
 *
 * Scenarios (`--only a,b,...`; default all):
 *   sends-own  16 senders, each in its own channel   vs  http floor POST /messages (one INSERT)
 *   sends-one  16 senders in one shared channel      vs  http floor POST /messages
 *   history    GET /v1/channels/:id/messages?limit=50 on a channel of --history-messages, 1 and 16
 *              clients                               vs  the keyset query through express + pg
 *                                                        (bench/compare/floor-reads.ts)
 *   inbox      GET /v1/me/channels for a user in --inbox-channels channels, half with unread (no floor)
 *   embedded   16 senders in own channels on the embedded database (PGlite, no DATABASE_URL; no floor)
 *   connect    --sockets Socket.IO clients connecting with user tokens  vs  bare Socket.IO
 *              (/work/shared/perf-floors/sio/server.js)
 *
 * Per run: requests/s, latency p50/p99 (every response, exact), Node CPU ms per request of the server
 * process (/proc/<pid>/stat utime+stime), PostgreSQL CPU ms per request (every process of the private
 * cluster, including backends that exited), statements per request from pg_stat_statements (top-level;
 * split into the request path and the background followers by statement text, see BACKGROUND), and
 * the load average. Results: tables on stdout, JSON + Markdown in bench/results/.
 *
 * Options: --pairs 3 --seconds 10 --warmup 3 --connections 16 --history-messages 100000
 *   --thread-replies 0 (history: that many of the channel's messages become thread-only replies, 100 per
 *   root, and GET /v1/messages/:id/replies?limit=50 is measured too, 1 client)
 *   --thread-roots 0 (CONTRACT §23's read state: history: the newest N messages each start a thread of
 *   5 thread-only replies the reader takes part in, 3 of them unread; inbox: 2 such threads per channel)
 *   --inbox-channels 500 --inbox-messages 100 --sockets 1000 --socket-channel-size 50
 *   --service-dir <dir with dist/main.js> (default: this checkout) --floor-dir /work/shared/perf-floors
 *   --pg-bin /usr/lib/postgresql/15/bin (or PG_BIN) --pg-os-user postgres (initdb refuses root)
 *   --log-level warn (the service's LOG_LEVEL) --tracing off (on: the service exports every span over
 *   OTLP to an endpoint in this process, docs/TRACING.md) --out bench/results
 */
import autocannon from 'autocannon';
import { ChildProcess, execFileSync, fork, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import { createServer } from 'http';
import type { AddressInfo } from 'net';
import { isAbsolute, join, resolve } from 'path';
import { sign } from 'jsonwebtoken';
import {
  API_KEY,
  API_SECRET,
  authHeader,
  BENCH_REDIS_URL,
  freePort,
  machine,
  median,
  ROOT,
  Server,
  startServer,
} from './lib';
import {
  cleanupAll,
  installSignalHandlers,
  interrupted,
  log,
  onCleanup,
  PgCluster,
  pgQuery,
  processCpuMs,
  readStatements,
  redisCommandCounts,
  RedisServer,
  resetStatements,
  SetupError,
  sleep,
  startPostgres,
  startRedis,
  Statement,
  stopChild,
  transpileHelpers,
  withTimeout,
} from './compare/infra';
import { READ_THREADS_NOTE, seedHistoryChannel, seedInbox, seedReadThreads } from './compare/seed';
import type { FromSockets, ToSockets } from './compare/sockets';

// ---------------------------------------------------------------- options

const SCENARIOS = ['sends-own', 'sends-one', 'history', 'inbox', 'embedded', 'connect'] as const;
type Scenario = (typeof SCENARIOS)[number];

function flag(name: string): string | undefined {
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}`) return argv[i + 1];
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}
function numFlag(name: string, dflt: number, min = 1): number {
  const v = flag(name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new SetupError(`--${name} must be a number ≥ ${min}, got "${v}"`);
  return n;
}

function options() {
  const only = (flag('only') ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of only) {
    if (!(SCENARIOS as readonly string[]).includes(s))
      throw new SetupError(`--only: unknown scenario "${s}" (known: ${SCENARIOS.join(', ')})`);
  }
  const serviceDir = resolve(flag('service-dir') ?? ROOT);
  const main = [join(serviceDir, 'dist', 'main.js'), join(serviceDir, 'main.js')].find((p) => existsSync(p));
  if (!main)
    throw new SetupError(
      `--service-dir ${serviceDir}: no dist/main.js there (run \`npx nest build\` in it first)`,
    );
  const out = flag('out') ?? join(ROOT, 'bench', 'results');
  return {
    only: new Set(only as Scenario[]),
    pairs: numFlag('pairs', 3),
    seconds: numFlag('seconds', 10),
    warmup: numFlag('warmup', 3, 0),
    connections: numFlag('connections', 16),
    historyMessages: numFlag('history-messages', 100_000),
    threadReplies: numFlag('thread-replies', 0, 0),
    threadRoots: numFlag('thread-roots', 0, 0),
    inboxChannels: numFlag('inbox-channels', 500),
    inboxMessages: numFlag('inbox-messages', 100, 2),
    sockets: numFlag('sockets', 1000),
    socketChannelSize: numFlag('socket-channel-size', 50),
    serviceDir,
    main,
    floorDir: resolve(flag('floor-dir') ?? process.env.PERF_FLOORS ?? '/work/shared/perf-floors'),
    pgBin: flag('pg-bin') ?? process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin',
    pgOsUser: flag('pg-os-user') ?? 'postgres',
    logLevel: flag('log-level') ?? 'warn',
    tracing: onOff('tracing'),
    out: isAbsolute(out) ? out : resolve(out),
  };
}

function onOff(name: string): boolean {
  const v = flag(name) ?? 'off';
  if (v !== 'on' && v !== 'off') throw new SetupError(`--${name} must be on or off, got "${v}"`);
  return v === 'on';
}
type Options = ReturnType<typeof options>;

// ---------------------------------------------------------------- statements: request path vs background

/**
 * Statements issued by the service's background followers (the realtime publisher, the webhook and
 * push relays, event retention), recognised by their text: pg_stat_statements cannot tell which
 * connection of the one pool ran a statement. The request path of these scenarios only INSERTs into
 * `events`; everything that reads the log (and the settled bound read before it) is a follower.
 * Check the "top statements" table when the code changes: an unrecognised follower statement counts
 * as request path.
 */
const BACKGROUND: RegExp[] = [
  /\bevent_relay_cursors\b/i,
  /\bFROM events\b/i,
  /\bpg_current_snapshot\(\)/i,
  /\bJOIN blocks b ON b\.blocked_id = msg\.user_id\b/i, // realtime publisher: who blocks each new message's author
  /\bwebhook_deliveries\b|\bJOIN webhooks w\b/i,
  // the data-rights sweepers' periodic scans
  /\bFROM user_erasures WHERE status = \$\d+ AND updated_at\b|\bFROM user_exports WHERE status\b/i,
  /^\s*SELECT \$1\s*$/i, // connection checks (pg_stat_statements shows `SELECT 1` so)
];
/**
 * The realtime publisher renders the messages of new events for their envelopes with the same
 * statements a history page uses. In scenarios whose requests do not render messages (sends) they
 * are background; in reads (history, inbox) they are the request path.
 */
const MESSAGE_RENDER: RegExp[] = [
  /\bmsg\.id = ANY\(\$\d+::uuid\[\]\)/i,
  /\bmessage_id = ANY\(\$\d+::uuid\[\]\)/i,
  /\bAS read_receipts FROM workspaces\b/i,
  /\bunnest\(\$\d+::uuid\[\]\) AS ch\(id\) CROSS JOIN LATERAL\b/i,
];
/** The first statement of a follower's own transaction: each call brings one BEGIN and one COMMIT. */
const BACKGROUND_TX_OPENERS: RegExp[] = [/\bevent_relay_cursors\b.*\bFOR UPDATE SKIP LOCKED\b/i];
const TX_CONTROL = /^\s*(BEGIN|START TRANSACTION|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

type StatementClass = 'request' | 'background' | 'tx' | 'nested';
/** `rendersMessages`: the requests themselves render messages (reads), so MESSAGE_RENDER is theirs. */
function classify(s: Statement, rendersMessages: boolean): StatementClass {
  if (!s.toplevel) return 'nested';
  if (TX_CONTROL.test(s.query)) return 'tx';
  if (BACKGROUND.some((r) => r.test(s.query))) return 'background';
  if (!rendersMessages && MESSAGE_RENDER.some((r) => r.test(s.query))) return 'background';
  return 'request';
}

interface StatementSummary {
  /** top-level statements (what the clients of PostgreSQL sent), per request */
  total: number;
  requestPath: number;
  background: number;
  /** BEGIN/COMMIT/... (already inside requestPath/background), per request */
  txControl: number;
  /** statements run inside other statements (functions, foreign-key checks), per request */
  nested: number;
  /** times top-level statements were planned, and their planning time in ms, per request */
  plans: number;
  planMs: number;
  /** WAL records written by the top-level statements (nested ones included), per request */
  walRecords: number;
  /** how MESSAGE_RENDER statements were counted */
  rendersMessages: boolean;
  /** raw statements of the run (all calls, not per request) */
  raw: Statement[];
}

function summarize(stmts: Statement[], requests: number, rendersMessages: boolean): StatementSummary {
  let total = 0;
  let background = 0;
  let tx = 0;
  let nested = 0;
  let bgTx = 0;
  let plans = 0;
  let planMs = 0;
  let wal = 0;
  for (const s of stmts) {
    const c = classify(s, rendersMessages);
    if (c === 'nested') nested += s.calls;
    else {
      total += s.calls;
      plans += s.plans;
      planMs += s.planMs;
      wal += s.walRecords;
    }
    if (c === 'background') background += s.calls;
    if (c === 'tx') tx += s.calls;
    if (c === 'background' && BACKGROUND_TX_OPENERS.some((r) => r.test(s.query))) bgTx += s.calls;
  }
  background += Math.min(tx, 2 * bgTx);
  const n = Math.max(1, requests);
  return {
    total: total / n,
    requestPath: (total - background) / n,
    background: background / n,
    txControl: tx / n,
    nested: nested / n,
    plans: plans / n,
    planMs: planMs / n,
    walRecords: wal / n,
    rendersMessages,
    raw: stmts,
  };
}

// ---------------------------------------------------------------- runs

type Side = 'floor' | 'service';

interface Run {
  group: string;
  side: Side;
  pair: number;
  at: string;
  loadavg: number[];
  loadavgEnd: number[];
  seconds: number;
  /** answered with 2xx (sockets connected, for connect) */
  requests: number;
  errors: number;
  /** requests per second (2xx) */
  rate: number;
  p50: number;
  p99: number;
  /** connect only: time until every socket was connected, s */
  connectS?: number;
  /** connect only: Socket.IO events the clients received meanwhile */
  events?: number;
  nodeCpuMs: number;
  pgCpuMs: number | null;
  statements: StatementSummary | null;
  /** Redis commands per request (every command the private Redis ran in the run, background included), and the main ones */
  redis?: { perRequest: number; top: string } | null;
  errorSamples: string[];
}

interface Target {
  side: Side;
  label: string;
  url: string;
  /** the server process whose CPU is read */
  pid: number;
  /** database whose statements are counted (none: embedded) */
  db: string | null;
  /** per connection i: what it sends */
  requests: (i: number) => autocannon.Request[];
  /** the requests render messages (reads): see MESSAGE_RENDER */
  rendersMessages?: boolean;
}

interface Env {
  opts: Options;
  pg: PgCluster | null;
  redis: RedisServer | null;
  encryptionKey: string;
  helpers: string;
  /** --tracing on: the OTLP endpoint the services export every span to. */
  traces: TraceSink | null;
}

/**
 * `--tracing on`: an OTLP/HTTP endpoint in the bench's own process that takes every export (200) and
 * counts them. The services export to it with every trace sampled (the SDK's defaults otherwise):
 * the cost of tracing on, against the same build's runs with tracing off (the default).
 */
interface TraceSink {
  url: string;
  exports: number;
  bytes: number;
}

async function startTraceSink(): Promise<TraceSink> {
  const sink: TraceSink = { url: '', exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => (sink.bytes += d.length));
    req.on('end', () => {
      sink.exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup('trace sink', () => new Promise<void>((r) => server.close(() => r())));
  return sink;
}

const pct = (sorted: Float64Array, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

async function beforeRun(env: Env): Promise<void> {
  // a checkpoint now rather than in the middle of a run; then let the machine breathe
  if (env.pg) await env.pg.admin('CHECKPOINT');
  await sleep(500);
}

/** One fixed-duration autocannon run against `t`, with the per-request costs. */
async function httpRun(
  env: Env,
  t: Target,
  group: string,
  pair: number,
  connections: number,
  seconds: number,
): Promise<Run> {
  await beforeRun(env);
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let next = 0;
  if (env.pg && t.db) await resetStatements(env.pg);
  const load0 = loadavg();
  const at = new Date().toISOString();
  const cpu0 = processCpuMs(t.pid);
  const pg0 = env.pg && t.db ? env.pg.cpuMs() : 0;
  const redisPrivate = env.redis && !env.redis.prefix && t.side === 'service' ? env.redis.url : null;
  const redis0 = redisPrivate ? await redisCommandCounts(redisPrivate) : null;
  let inst: autocannon.Instance | undefined;
  const result = await withTimeout(
    new Promise<autocannon.Result>((resolve, reject) => {
      inst = autocannon(
        {
          url: t.url,
          connections,
          duration: seconds,
          timeout: 30,
          setupClient: (client) => client.setRequests(t.requests(next++ % connections)),
        },
        (err, r) => (err ? reject(err) : resolve(r)),
      );
      inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) latencies.push(ms);
        else if (errorSamples.length < 3) errorSamples.push(`HTTP ${status}`);
      });
      inst.on('reqError', (e: Error) => {
        if (errorSamples.length < 3) errorSamples.push(e.message);
      });
    }),
    (seconds + 90) * 1000,
    `${t.label} run`,
  ).catch((e: unknown) => {
    inst?.stop();
    throw e;
  });
  await sleep(300); // the followers' passes over the last commits belong to this run
  const cpu1 = processCpuMs(t.pid);
  const pg1 = env.pg && t.db ? env.pg.cpuMs() : 0;
  const stmts = env.pg && t.db ? await readStatements(env.pg, t.db) : null;
  const requests = result['2xx'];
  const redis1 = redisPrivate ? await redisCommandCounts(redisPrivate) : null;
  const redis = redis0 && redis1 ? redisPerRequest(redis0, redis1, requests) : null;
  const sorted = Float64Array.from(latencies).sort();
  const run: Run = {
    group,
    side: t.side,
    pair,
    at,
    loadavg: load0,
    loadavgEnd: loadavg(),
    seconds: result.duration,
    requests,
    errors: result.non2xx + result.errors,
    rate: requests / result.duration,
    p50: pct(sorted, 50),
    p99: pct(sorted, 99),
    nodeCpuMs: (cpu1 - cpu0) / Math.max(1, requests),
    pgCpuMs: env.pg && t.db ? (pg1 - pg0) / Math.max(1, requests) : null,
    statements: stmts ? summarize(stmts, requests, t.rendersMessages ?? false) : null,
    redis,
    errorSamples,
  };
  log(
    `  ${group} ${t.side.padEnd(7)} pair ${pair}: ${run.rate.toFixed(0)}/s p50 ${run.p50.toFixed(1)} p99 ${run.p99.toFixed(1)} ms; ` +
      `Node ${run.nodeCpuMs.toFixed(2)} ms/req` +
      (run.pgCpuMs !== null ? `, PG ${run.pgCpuMs.toFixed(2)} ms/req` : '') +
      (run.statements
        ? `, ${run.statements.total.toFixed(2)} stmts/req (${run.statements.requestPath.toFixed(2)} + bg ${run.statements.background.toFixed(2)})`
        : '') +
      (run.redis ? `, Redis ${run.redis.perRequest.toFixed(2)} cmds/req (${run.redis.top})` : '') +
      (run.errors ? `; ${run.errors} errors ${errorSamples.join(' | ')}` : '') +
      `; load ${load0.map((x) => x.toFixed(1)).join(' ')}`,
  );
  return run;
}

/** The commands Redis ran between two counts, per request, with the four most frequent (`publish 1.00`). */
function redisPerRequest(
  before: Map<string, number>,
  after: Map<string, number>,
  requests: number,
): { perRequest: number; top: string } {
  const n = Math.max(1, requests);
  const delta = [...after]
    .map(([cmd, calls]) => [cmd, (calls - (before.get(cmd) ?? 0)) / n] as const)
    .filter(([, d]) => d > 0);
  delta.sort((a, b) => b[1] - a[1]);
  return {
    perRequest: delta.reduce((sum, [, d]) => sum + d, 0),
    top: delta
      .slice(0, 4)
      .map(([cmd, d]) => `${cmd} ${d.toFixed(2)}`)
      .join(', '),
  };
}

/**
 * Floor and service alternately: pair 1 floor then service, pair 2 service then floor, ... after a
 * warm-up of each. Without a floor, `pairs` runs of the service.
 */
async function alternate(
  env: Env,
  group: string,
  floor: Target | null,
  service: Target,
  connections: number,
): Promise<Run[]> {
  const { warmup, seconds, pairs } = env.opts;
  if (warmup > 0) {
    for (const t of [floor, service])
      if (t) await httpRun(env, t, `${group} (warm-up)`, 0, connections, warmup);
  }
  const runs: Run[] = [];
  for (let p = 1; p <= pairs; p++) {
    const order = floor ? (p % 2 ? [floor, service] : [service, floor]) : [service];
    for (const t of order) runs.push(await httpRun(env, t, group, p, connections, seconds));
  }
  return runs;
}

// ---------------------------------------------------------------- servers

const children: ChildProcess[] = [];

async function waitHttp(
  url: string,
  child: ChildProcess,
  what: string,
  out: () => string,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}): ${out()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.text();
      if (res.status < 500) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline)
      throw new Error(`${what} not answering ${url} within ${ms / 1000} s: ${out()}`);
    await sleep(100);
  }
}

interface Proc {
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

/** A plain node server (a floor): spawned, waited for, stopped by PID at the end. */
async function startNode(
  what: string,
  script: string,
  env: Record<string, string>,
  cwd: string,
  probe: string,
): Promise<Proc> {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = onCleanup(
    what,
    () => stopChild(child),
    () => child.kill('SIGKILL'),
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${url}${probe}`, child, what, () => out);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, pid: child.pid!, stop };
}

async function startService(
  env: Env,
  extra: Record<string, string> = {},
  embedded = false,
): Promise<Server & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-compare-data-'));
  const storageEnv: Record<string, string> = { SERVICE_DATA_DIR: dataDir };
  if (!embedded) {
    storageEnv.DATABASE_URL = env.pg!.url('chat');
    storageEnv.REDIS_URL = env.redis!.url;
    storageEnv.SERVICE_ENCRYPTION_KEY = env.encryptionKey;
    if (env.redis!.prefix) storageEnv.SERVICE_REDIS_PREFIX = env.redis!.prefix;
  }
  const server = await startServer(
    { env: storageEnv, drop: async () => undefined },
    {
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      LOG_LEVEL: env.opts.logLevel,
      ...(env.traces ? { OTEL_EXPORTER_OTLP_ENDPOINT: env.traces.url, OTEL_SERVICE_NAME: 'bench' } : {}),
      ...extra,
    },
    { main: env.opts.main },
  );
  const stop = onCleanup(
    'service',
    async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    () => process.kill(server.pid, 'SIGKILL'),
  );
  return { ...server, stop, dataDir };
}

async function startHttpFloor(env: Env): Promise<Proc> {
  const dir = join(env.opts.floorDir, 'http');
  return startNode(
    'http floor',
    join(dir, 'server.js'),
    { DATABASE_URL: env.pg!.url('floor'), POOL: '16' },
    dir,
    '/ping',
  );
}

// ---------------------------------------------------------------- REST helpers

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth = authHeader,
): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

const userToken = (externalId: string) =>
  sign({ sub: externalId }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY, expiresIn: 6 * 3600 });

async function createUsers(base: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 100) {
    await api(base, 'POST', '/v1/users', {
      users: ids.slice(i, i + 100).map((external_id) => ({ external_id, name: external_id })),
    });
  }
}

async function createChannel(
  base: string,
  externalId: string,
  createdBy: string,
  members: string[] = [],
): Promise<string> {
  const c = await api(base, 'POST', '/v1/channels', {
    type: 'group',
    external_id: externalId,
    name: externalId,
    created_by: createdBy,
    member_external_ids: members,
  });
  const id = c?.id ?? c?.channel?.id;
  if (typeof id !== 'string') throw new Error(`no channel id in ${JSON.stringify(c).slice(0, 300)}`);
  return id;
}

// message content like the floor's load.js: up to 16 words of a skewed vocabulary, at most 100 chars
const WORDS = Array.from({ length: 2000 }, (_, i) => i.toString(36) + 'ab'.slice(0, i % 3));
const content = () =>
  Array.from({ length: 16 }, () => WORDS[Math.floor(2000 * Math.random() ** 3)])
    .join(' ')
    .slice(0, 100);

const jsonPost = (
  path: string,
  headers: Record<string, string>,
  body: () => unknown,
): autocannon.Request => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', ...headers },
  setupRequest: (r) => ({ ...r, body: JSON.stringify(body()) }),
});

// ---------------------------------------------------------------- scenarios

interface Group {
  name: string;
  /** what is compared, one line */
  what: string;
  unit: string;
  runs: Run[];
  hasFloor: boolean;
}
interface ScenarioResult {
  scenario: Scenario;
  title: string;
  notes: string[];
  groups: Group[];
}

let tagSeq = 0;
const tag = (s: string) => `${s}-${Date.now().toString(36)}-${++tagSeq}`;

async function scenarioSends(env: Env, shared: boolean): Promise<ScenarioResult> {
  const n = env.opts.connections;
  const t = tag(shared ? 'one' : 'own');
  const floor = await startHttpFloor(env);
  const service = await startService(env);
  try {
    const senders = Array.from({ length: n }, (_, i) => `${t}-s${i}`);
    await createUsers(service.baseUrl, senders);
    const channels: string[] = [];
    if (shared)
      channels.push(await createChannel(service.baseUrl, `${t}-shared`, senders[0]!, senders.slice(1)));
    else for (const s of senders) channels.push(await createChannel(service.baseUrl, `${t}-own-${s}`, s));
    const tokens = senders.map((s) => `Bearer ${userToken(s)}`);
    const floorTarget: Target = {
      side: 'floor',
      label: 'http floor',
      url: floor.url,
      pid: floor.pid,
      db: 'floor',
      requests: (i) => [
        jsonPost('/messages', {}, () => ({
          channelId: shared ? 1 : 1 + i,
          userId: 1 + i,
          content: content(),
        })),
      ],
    };
    const serviceTarget: Target = {
      side: 'service',
      label: 'service',
      url: service.baseUrl,
      pid: service.pid,
      db: 'chat',
      requests: (i) => [
        jsonPost(
          `/v1/channels/${shared ? channels[0] : channels[i]}/messages`,
          { authorization: tokens[i]! },
          () => ({ content: content() }),
        ),
      ],
    };
    const runs = await alternate(
      env,
      shared ? 'sends, one channel' : 'sends, own channels',
      floorTarget,
      serviceTarget,
      n,
    );
    return {
      scenario: shared ? 'sends-one' : 'sends-own',
      title: shared
        ? `Sends: ${n} senders in one shared channel`
        : `Sends: ${n} senders, each in its own channel`,
      notes: [
        `service: \`POST /v1/channels/:id/messages {content}\` with a user token per connection (autocannon, ${n} connections, ${env.opts.seconds} s per run); ` +
          `floor: the http floor's \`POST /messages\` (express + pg, one INSERT … RETURNING into a table with a keyset index and a GIN-indexed tsvector) on its own database of the same cluster` +
          (shared ? ', all sends with channelId 1.' : ', channelId = connection.'),
      ],
      groups: [
        {
          name: shared ? 'sends, one channel' : 'sends, own channels',
          what: 'POST a message',
          unit: 'sends/s',
          runs,
          hasFloor: true,
        },
      ],
    };
  } finally {
    await service.stop();
    await floor.stop();
  }
}

async function scenarioHistory(env: Env): Promise<ScenarioResult> {
  const N = env.opts.historyMessages;
  const t = tag('hist');
  const FLOOR_CHANNEL = 1_000_001;
  const service = await startService(env);
  const floor = await startNode(
    'history floor',
    join(env.helpers, 'floor-reads.js'),
    {
      DATABASE_URL: env.pg!.url('floor'),
      POOL: '16',
      NODE_PATH: join(env.opts.floorDir, 'http', 'node_modules'),
    },
    env.helpers,
    '/history?channel_id=0',
  );
  try {
    await createUsers(service.baseUrl, [`${t}-reader`, `${t}-writer`]);
    const channel = await createChannel(service.baseUrl, `${t}-big`, `${t}-reader`, [`${t}-writer`]);
    log(`  seeding ${N.toLocaleString('en')} messages into one channel of the service and of the floor ...`);
    const t0 = performance.now();
    await seedHistoryChannel(env.pg!.url('chat'), channel, `${t}-writer`, N);
    const replies = Math.min(env.opts.threadReplies, Math.floor(N / 10));
    if (replies > 0) await seedThreads(env.pg!.url('chat'), channel, replies);
    const readThreads = Math.min(env.opts.threadRoots, 50);
    if (readThreads > 0)
      await seedReadThreads(env.pg!.url('chat'), [channel], readThreads, `${t}-reader`, `${t}-writer`);
    await pgQuery(
      env.pg!.url('floor'),
      `INSERT INTO messages (channel_id, user_id, content, created_at)
       SELECT $1, 2, 'message number ' || g, now() - make_interval(secs => ($2 - g) / 10.0) FROM generate_series(1, $2) g`,
      [FLOOR_CHANNEL, N],
    );
    await pgQuery(env.pg!.url('chat'), 'VACUUM ANALYZE messages');
    await pgQuery(env.pg!.url('floor'), 'VACUUM ANALYZE messages');
    log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const reader = `Bearer ${userToken(`${t}-reader`)}`;
    const floorTarget: Target = {
      side: 'floor',
      label: 'history floor',
      url: floor.url,
      pid: floor.pid,
      db: 'floor',
      requests: () => [{ method: 'GET', path: `/history?channel_id=${FLOOR_CHANNEL}&limit=50` }],
    };
    const serviceTarget: Target = {
      side: 'service',
      label: 'service',
      url: service.baseUrl,
      pid: service.pid,
      db: 'chat',
      requests: () => [
        {
          method: 'GET',
          path: `/v1/channels/${channel}/messages?limit=50`,
          headers: { authorization: reader },
        },
      ],
      rendersMessages: true,
    };
    const groups: Group[] = [];
    for (const c of [1, env.opts.connections]) {
      const name = `history, ${c} client${c > 1 ? 's' : ''}`;
      groups.push({
        name,
        what: 'newest page of 50',
        unit: 'pages/s',
        runs: await alternate(env, name, floorTarget, serviceTarget, c),
        hasFloor: true,
      });
    }
    if (replies > 0) {
      // the thread of the newest root: its first page of 50 replies, oldest first
      const rows = await pgQuery(
        env.pg!.url('chat'),
        `SELECT thread_id AS root FROM messages WHERE channel_id = $1 AND thread_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
        [channel],
      );
      const root = String(rows[0]!.root);
      const name = 'replies, 1 client';
      groups.push({
        name,
        what: 'first page of 50 replies of a 100-reply thread',
        unit: 'pages/s',
        runs: await alternate(
          env,
          name,
          floorTarget,
          {
            ...serviceTarget,
            requests: () => [
              {
                method: 'GET',
                path: `/v1/messages/${root}/replies?limit=50`,
                headers: { authorization: reader },
              },
            ],
          },
          1,
        ),
        hasFloor: true,
      });
    }
    return {
      scenario: 'history',
      title: `History: newest page of 50 on a channel of ${N.toLocaleString('en')} messages${replies > 0 ? `, ${replies.toLocaleString('en')} of them thread-only replies` : ''}${readThreads > 0 ? `, ${readThreads} roots on the page with threads the reader takes part in` : ''}`,
      notes: [
        ...(readThreads > 0 ? [READ_THREADS_NOTE(`the newest ${readThreads} messages`)] : []),
        ...(replies > 0
          ? [
              `thread replies: every 10th message (${replies.toLocaleString('en')}) is made a thread-only reply after seeding, 100 per root (the message 1 in each block of 1,000), with its counters row; history skips them through the partial \`messages_channel_time\`, \`/replies\` pages through \`messages_thread\`.`,
            ]
          : []),
        `service: \`GET /v1/channels/:id/messages?limit=50\` with the reader's token; floor (bench/compare/floor-reads.ts, **written for this benchmark**, the http floor's express + pg): ` +
          '`SELECT id, channel_id, user_id, content, created_at FROM messages WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT 50` on the floor table, rows as JSON. ' +
          'Both tables seeded with one INSERT … SELECT generate_series, then VACUUM ANALYZE.',
      ],
      groups,
    };
  } finally {
    await floor.stop();
    await service.stop();
  }
}

/**
 * Turns `replies` of the seeded channel's messages (every 10th, oldest first) into thread-only replies,
 * 100 per root, the root being the first message of each block of 1,000; writes the roots' counters and
 * clears the replies' channel ordinals as chat_send_message would have (the channel's other ordinals keep
 * their gaps: this scenario reads history and threads, not unread counts).
 */
async function seedThreads(url: string, channel: string, replies: number): Promise<void> {
  await pgQuery(
    url,
    `WITH numbered AS (
       SELECT id, row_number() OVER (ORDER BY created_at, id) AS g FROM messages WHERE channel_id = $1),
     roots AS (SELECT id, g FROM numbered WHERE g % 1000 = 1)
     UPDATE messages m SET thread_id = r.id, show_in_channel = false, channel_no = NULL, sender_no = NULL
       FROM numbered n JOIN roots r ON r.g = ((n.g - 1) / 1000) * 1000 + 1
      WHERE m.id = n.id AND n.g % 10 = 0 AND n.g <= $2 * 10`,
    [channel, replies],
  );
  await pgQuery(
    url,
    `INSERT INTO message_threads (root_id, channel_id, reply_count, last_reply_at, participants)
     SELECT thread_id, channel_id, count(*), max(created_at), array_agg(DISTINCT user_id)
       FROM messages WHERE channel_id = $1 AND thread_id IS NOT NULL GROUP BY thread_id, channel_id`,
    [channel],
  );
}

async function scenarioInbox(env: Env): Promise<ScenarioResult> {
  const { inboxChannels: C, inboxMessages: M } = env.opts;
  const t = tag('inbox');
  const service = await startService(env);
  try {
    const reader = `${t}-reader`;
    const writer = `${t}-writer`;
    await createUsers(service.baseUrl, [reader, writer]);
    log(`  seeding ${C} channels × ${M} messages, every other one with ${M / 2} unread ...`);
    const url = env.pg!.url('chat');
    const t0 = performance.now();
    await seedInbox(url, t, reader, writer, C, M, env.opts.threadRoots > 0 ? 2 : 0);
    await pgQuery(url, 'VACUUM ANALYZE');
    log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const auth = `Bearer ${userToken(reader)}`;
    const page = await api(service.baseUrl, 'GET', '/v1/me/channels', undefined, auth);
    const unread = (page.channels as { unread_count: number }[]).filter((c) => c.unread_count > 0).length;
    const serviceTarget: Target = {
      side: 'service',
      label: 'service',
      url: service.baseUrl,
      pid: service.pid,
      db: 'chat',
      requests: () => [{ method: 'GET', path: '/v1/me/channels', headers: { authorization: auth } }],
      rendersMessages: true,
    };
    const runs = await alternate(env, 'inbox, 1 client', null, serviceTarget, 1);
    return {
      scenario: 'inbox',
      title: `Inbox: GET /v1/me/channels for a user in ${C} channels${env.opts.threadRoots > 0 ? ', 2 threads with unread replies in each' : ''}`,
      notes: [
        ...(env.opts.threadRoots > 0 ? [READ_THREADS_NOTE('the newest 2 messages of every channel')] : []),
        `${C} channels × ${M} messages (seeded with SQL), the reader has read every message of half of them and half the messages of the other half; ` +
          `the first page (the API's default limit, ${page.channels.length} channels) had ${unread} channels with unread messages. One client, back to back. No floor: the figures to judge are PostgreSQL CPU and statements per call.`,
      ],
      groups: [
        { name: 'inbox, 1 client', what: 'GET /v1/me/channels', unit: 'calls/s', runs, hasFloor: false },
      ],
    };
  } finally {
    await service.stop();
  }
}

async function scenarioEmbedded(env: Env): Promise<ScenarioResult> {
  const n = env.opts.connections;
  const t = tag('emb');
  const service = await startService(env, {}, true);
  try {
    const senders = Array.from({ length: n }, (_, i) => `${t}-s${i}`);
    await createUsers(service.baseUrl, senders);
    const channels: string[] = [];
    for (const s of senders) channels.push(await createChannel(service.baseUrl, `${t}-own-${s}`, s));
    const tokens = senders.map((s) => `Bearer ${userToken(s)}`);
    const target: Target = {
      side: 'service',
      label: 'embedded service',
      url: service.baseUrl,
      pid: service.pid,
      db: null,
      requests: (i) => [
        jsonPost(`/v1/channels/${channels[i]}/messages`, { authorization: tokens[i]! }, () => ({
          content: content(),
        })),
      ],
    };
    const runs = await alternate(env, 'embedded sends', null, target, n);
    return {
      scenario: 'embedded',
      title: `Embedded (PGlite, no DATABASE_URL): ${n} senders, each in its own channel`,
      notes: [
        '`node dist/main.js` without DATABASE_URL and REDIS_URL (SERVICE_DATA_DIR in a temporary directory): the database runs inside the Node process, so Node CPU per send includes it. No floor; the target is absolute.',
      ],
      groups: [{ name: 'embedded sends', what: 'POST a message', unit: 'sends/s', runs, hasFloor: false }],
    };
  } finally {
    await service.stop();
  }
}

// connect ----------------------------------------------------------

function askSockets(
  child: ChildProcess,
  msg: ToSockets,
  type: FromSockets['type'],
  ms: number,
): Promise<FromSockets> {
  return withTimeout(
    new Promise<FromSockets>((resolve, reject) => {
      const onMsg = (m: FromSockets) => {
        if (m.type !== type) return;
        child.off('message', onMsg);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = () => reject(new Error('the socket clients process exited'));
      child.on('message', onMsg);
      child.once('exit', onExit);
      child.send(msg);
    }),
    ms,
    `sockets ${msg.cmd}`,
  );
}

async function connectRun(
  env: Env,
  clients: ChildProcess,
  target: { side: Side; url: string; pid: number; db: string | null; tokens: string[] | null },
  group: string,
  pair: number,
): Promise<Run> {
  const n = env.opts.sockets;
  await beforeRun(env);
  if (env.pg && target.db) await resetStatements(env.pg);
  const load0 = loadavg();
  const at = new Date().toISOString();
  const cpu0 = processCpuMs(target.pid);
  const pg0 = env.pg ? env.pg.cpuMs() : 0;
  const r = (await askSockets(
    clients,
    { cmd: 'connect', url: target.url, n, tokens: target.tokens, batch: 100, timeoutMs: 30_000 },
    'connected',
    240_000,
  )) as Extract<FromSockets, { type: 'connected' }>;
  await sleep(1_000); // what a connection sets off after its handshake (room joins, presence) belongs to it
  const cpu1 = processCpuMs(target.pid);
  const pg1 = env.pg ? env.pg.cpuMs() : 0;
  const stmts = env.pg && target.db ? await readStatements(env.pg, target.db) : null;
  const load1 = loadavg();
  await askSockets(clients, { cmd: 'close' }, 'closed', 60_000);
  await sleep(3_000); // disconnect bookkeeping, outside the measurement
  const run: Run = {
    group,
    side: target.side,
    pair,
    at,
    loadavg: load0,
    loadavgEnd: load1,
    seconds: r.ms / 1000,
    requests: r.ok,
    errors: r.failed,
    rate: r.ok / (r.ms / 1000),
    p50: NaN,
    p99: NaN,
    connectS: r.ms / 1000,
    events: r.events,
    nodeCpuMs: (cpu1 - cpu0) / Math.max(1, r.ok),
    pgCpuMs: env.pg && target.db ? (pg1 - pg0) / Math.max(1, r.ok) : null,
    statements: stmts ? summarize(stmts, r.ok, false) : null,
    errorSamples: r.errors,
  };
  log(
    `  ${group} ${target.side.padEnd(7)} pair ${pair}: ${r.ok}/${n} connected in ${run.connectS!.toFixed(2)} s; Node ${run.nodeCpuMs.toFixed(2)} ms/socket` +
      (run.pgCpuMs !== null
        ? `, PG ${run.pgCpuMs.toFixed(2)} ms/socket, ${run.statements!.total.toFixed(2)} stmts/socket`
        : '') +
      `; ${r.events} events at the clients` +
      (r.failed ? `; ${r.failed} failed: ${r.errors.join(' | ')}` : '') +
      `; load ${load0.map((x) => x.toFixed(1)).join(' ')}`,
  );
  if (r.ok < n)
    throw new Error(`${target.side}: only ${r.ok} of ${n} sockets connected: ${r.errors.join(' | ')}`);
  return run;
}

async function scenarioConnect(env: Env): Promise<ScenarioResult> {
  const { sockets: n, socketChannelSize: size } = env.opts;
  const t = tag('conn');
  const sioDir = join(env.opts.floorDir, 'sio');
  // the floor: bare Socket.IO (perf-floors/sio/server.js, driven over IPC; it joins every socket to one room)
  const port = await freePort();
  const bare = fork(join(sioDir, 'server.js'), ['sio', String(port)], {
    cwd: sioDir,
    execArgv: ['--expose-gc'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(bare);
  const stopBare = onCleanup(
    'bare Socket.IO',
    () => stopChild(bare),
    () => bare.kill('SIGKILL'),
  );
  const clients = fork(join(env.helpers, 'sockets.js'), [], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_PATH: join(ROOT, 'node_modules') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(clients);
  const stopClients = onCleanup(
    'socket clients',
    () => stopChild(clients, 'SIGTERM', 5_000),
    () => clients.kill('SIGKILL'),
  );
  const service = await startService(env);
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        bare.on('message', (m: { type?: string }) => m.type === 'listening' && resolve());
        bare.once('exit', (c) => reject(new Error(`bare Socket.IO server exited with ${c}`)));
      }),
      30_000,
      'bare Socket.IO server start',
    );
    const users = Array.from({ length: n }, (_, i) => `${t}-u${String(i).padStart(5, '0')}`);
    log(`  creating ${n} users in ${Math.ceil(n / size)} channels of ${size} ...`);
    await createUsers(service.baseUrl, users);
    for (let i = 0; i < n; i += size) {
      const members = users.slice(i, i + size);
      await createChannel(service.baseUrl, `${t}-room-${i / size}`, members[0]!, members.slice(1));
    }
    const tokens = users.map(userToken);
    const floorT = {
      side: 'floor' as const,
      url: `http://127.0.0.1:${port}`,
      pid: bare.pid!,
      db: null,
      tokens: null,
    };
    const serviceT = { side: 'service' as const, url: service.baseUrl, pid: service.pid, db: 'chat', tokens };
    const group = `connect ${n} sockets`;
    // warm-up: one connect of each
    await connectRun(env, clients, floorT, `${group} (warm-up)`, 0);
    await connectRun(env, clients, serviceT, `${group} (warm-up)`, 0);
    const runs: Run[] = [];
    for (let p = 1; p <= env.opts.pairs; p++) {
      for (const target of p % 2 ? [floorT, serviceT] : [serviceT, floorT])
        runs.push(await connectRun(env, clients, target, group, p));
    }
    return {
      scenario: 'connect',
      title: `Connect ${n.toLocaleString('en')} Socket.IO clients`,
      notes: [
        `${n} socket.io-client sockets (websocket transport, reconnection off) in a process of their own, opened in batches of 100 like perf-floors/sio/clients.js; time from the first open to the last \`connect\`. ` +
          `Service: a user token per socket, every user a member of one of ${Math.ceil(n / size)} group channels of ${size} (the service joins each socket to its channel rooms and announces presence); ` +
          'floor: perf-floors/sio/server.js (bare Socket.IO, every socket joins one room). CPU and statements per socket: from the first open to 1 s after the last connect.',
      ],
      groups: [{ name: group, what: 'connect a socket', unit: 'sockets/s', runs, hasFloor: true }],
    };
  } finally {
    await service.stop();
    await stopClients();
    await stopBare();
  }
}

// ---------------------------------------------------------------- report

interface Metric {
  key: string;
  label: string;
  get: (r: Run) => number | null;
  digits: number;
}

function metricsFor(g: Group): Metric[] {
  const connect = g.runs.some((r) => r.connectS !== undefined);
  const m: Metric[] = connect
    ? [
        { key: 'connectS', label: 'time to connect all (s)', get: (r) => r.connectS ?? null, digits: 2 },
        { key: 'nodeCpuMs', label: 'Node CPU ms / socket', get: (r) => r.nodeCpuMs, digits: 2 },
      ]
    : [
        { key: 'rate', label: g.unit, get: (r) => r.rate, digits: 0 },
        { key: 'p50', label: 'p50 (ms)', get: (r) => r.p50, digits: 2 },
        { key: 'p99', label: 'p99 (ms)', get: (r) => r.p99, digits: 2 },
        { key: 'nodeCpuMs', label: 'Node CPU ms / request', get: (r) => r.nodeCpuMs, digits: 3 },
      ];
  if (g.runs.some((r) => r.pgCpuMs !== null)) {
    const per = connect ? 'socket' : 'request';
    m.push(
      { key: 'pgCpuMs', label: `PostgreSQL CPU ms / ${per}`, get: (r) => r.pgCpuMs, digits: 3 },
      {
        key: 'stmts',
        label: `statements / ${per} (top-level)`,
        get: (r) => r.statements?.total ?? null,
        digits: 2,
      },
      {
        key: 'stmtsReq',
        label: '… on the request path',
        get: (r) => r.statements?.requestPath ?? null,
        digits: 2,
      },
      {
        key: 'stmtsBg',
        label: '… by background followers',
        get: (r) => r.statements?.background ?? null,
        digits: 2,
      },
      {
        key: 'stmtsNested',
        label: `nested statements / ${per}`,
        get: (r) => r.statements?.nested ?? null,
        digits: 2,
      },
      {
        key: 'plans',
        label: `top-level plannings / ${per}`,
        get: (r) => r.statements?.plans ?? null,
        digits: 3,
      },
      {
        key: 'planMs',
        label: `planning ms / ${per}`,
        get: (r) => r.statements?.planMs ?? null,
        digits: 3,
      },
      {
        key: 'walRecords',
        label: `WAL records / ${per}`,
        get: (r) => r.statements?.walRecords ?? null,
        digits: 2,
      },
    );
  }
  if (g.runs.some((r) => r.redis)) {
    m.push({
      key: 'redisCmds',
      label: 'Redis commands / request (all, background too)',
      get: (r) => r.redis?.perRequest ?? null,
      digits: 2,
    });
  }
  return m;
}

const fmt = (x: number | null | undefined, d: number) =>
  x === null || x === undefined || !Number.isFinite(x)
    ? '–'
    : x.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d });
const medianOf = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length ? median(v) : null;
};

interface Summary {
  metric: string;
  floor: number | null;
  service: number | null;
  /** median over pairs of service ÷ floor */
  ratio: number | null;
}

function summaryOf(g: Group): Summary[] {
  return metricsFor(g).map((m) => {
    const side = (s: Side) => medianOf(g.runs.filter((r) => r.side === s).map(m.get));
    const ratios: (number | null)[] = [];
    if (g.hasFloor) {
      const pairs = [...new Set(g.runs.map((r) => r.pair))];
      for (const p of pairs) {
        const f = g.runs.find((r) => r.pair === p && r.side === 'floor');
        const s = g.runs.find((r) => r.pair === p && r.side === 'service');
        const fv = f ? m.get(f) : null;
        const sv = s ? m.get(s) : null;
        ratios.push(fv && sv !== null ? sv / fv : null);
      }
    }
    return {
      metric: m.label,
      floor: g.hasFloor ? side('floor') : null,
      service: side('service'),
      ratio: medianOf(ratios),
    };
  });
}

/** Top statements of the service over all its runs of a group, per request. */
function topStatements(
  g: Group,
  k = 12,
): {
  query: string;
  perRequest: number;
  class: StatementClass;
  msPerCall: number;
  plansPerCall: number;
  planMsPerCall: number;
}[] {
  const runs = g.runs.filter((r) => r.side === 'service' && r.statements);
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const by = new Map<string, { s: Statement; calls: number; ms: number; plans: number; planMs: number }>();
  for (const r of runs) {
    for (const s of r.statements!.raw) {
      const key = `${s.toplevel}|${s.query}`;
      const e = by.get(key) ?? { s, calls: 0, ms: 0, plans: 0, planMs: 0 };
      e.calls += s.calls;
      e.ms += s.ms;
      e.plans += s.plans;
      e.planMs += s.planMs;
      by.set(key, e);
    }
  }
  return [...by.values()]
    .sort((a, b) => b.calls - a.calls)
    .slice(0, k)
    .map((e) => ({
      query: e.s.query,
      perRequest: e.calls / Math.max(1, requests),
      class: classify(e.s, runs[0]!.statements!.rendersMessages),
      msPerCall: e.ms / Math.max(1, e.calls),
      plansPerCall: e.plans / Math.max(1, e.calls),
      planMsPerCall: e.planMs / Math.max(1, e.plans),
    }));
}

const la = (x: number[]) => x.map((v) => v.toFixed(1)).join(' / ');

function markdown(results: ScenarioResult[], meta: Record<string, string>): string {
  const out: string[] = [];
  for (const s of results) {
    out.push(`### ${s.title}`, '', ...s.notes, '');
    for (const g of s.groups) {
      const sum = summaryOf(g);
      if (s.groups.length > 1) out.push(`**${g.name}**`, '');
      if (g.hasFloor) {
        out.push(
          '| median of runs | floor | service | service ÷ floor (median of pairs) |',
          '|---|---:|---:|---:|',
        );
        for (const x of sum) {
          const d = metricsFor(g).find((m) => m.label === x.metric)!.digits;
          out.push(`| ${x.metric} | ${fmt(x.floor, d)} | ${fmt(x.service, d)} | ${fmt(x.ratio, 2)} |`);
        }
      } else {
        out.push('| median of runs | service |', '|---|---:|');
        for (const x of sum)
          out.push(
            `| ${x.metric} | ${fmt(x.service, metricsFor(g).find((m) => m.label === x.metric)!.digits)} |`,
          );
      }
      out.push('');
      const connect = g.runs.some((r) => r.connectS !== undefined);
      const pg = g.runs.some((r) => r.pgCpuMs !== null);
      const per = connect ? 'socket' : 'req';
      const cols = [
        'pair',
        'side',
        'load avg 1/5/15 min at the start → 1 min at the end',
        ...(connect ? ['connect (s)'] : [g.unit, 'p50 / p99 (ms)']),
        `Node CPU ms/${per}`,
        ...(pg ? [`PG CPU ms/${per}`, `statements/${per} (request path + background; nested)`] : []),
        connect ? 'failed' : 'errors',
      ];
      out.push(
        `| ${cols.join(' | ')} |`,
        `|${cols.map((c) => (c === 'side' || c.startsWith('load') ? '---' : '---:')).join('|')}|`,
      );
      for (const r of g.runs) {
        const head = `| ${r.pair} | ${r.side} | ${la(r.loadavg)} → ${fmt(r.loadavgEnd[0], 1)} |`;
        const body = connect
          ? ` ${fmt(r.connectS, 2)} | ${fmt(r.nodeCpuMs, 2)} |`
          : ` ${fmt(r.rate, 0)} | ${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} | ${fmt(r.nodeCpuMs, 3)} |`;
        const st = r.statements;
        const pgCols = pg
          ? ` ${fmt(r.pgCpuMs, 3)} | ${st ? `${fmt(st.total, 2)} (${fmt(st.requestPath, 2)} + ${fmt(st.background, 2)}; ${fmt(st.nested, 2)})` : '–'} |`
          : '';
        out.push(`${head}${body}${pgCols} ${r.errors} |`);
      }
      out.push('');
      const top = topStatements(g);
      if (top.length) {
        out.push(
          '<details><summary>service: top statements (calls per request over all its runs)</summary>',
          '',
          '| calls/req | class | ms/call | plans/call | ms/plan | statement |',
          '|---:|---|---:|---:|---:|---|',
        );
        for (const q of top)
          out.push(
            `| ${q.perRequest.toFixed(3)} | ${q.class} | ${q.msPerCall.toFixed(3)} | ${q.plansPerCall.toFixed(2)} | ${q.planMsPerCall.toFixed(3)} | \`${q.query.slice(0, 160).replace(/\|/g, '\\|')}${q.query.length > 160 ? '…' : ''}\` |`,
          );
        out.push('', '</details>', '');
      }
    }
  }
  out.push(...Object.entries(meta).map(([k, v]) => `- ${k}: ${v}`));
  return out.join('\n');
}

/** The issue's targets, where this run measured them. */
function targets(results: ScenarioResult[], opts: Options): string[] {
  const lines: string[] = [];
  const group = (name: string) => results.flatMap((s) => s.groups).find((g) => g.name === name);
  const get = (g: Group | undefined, label: string) =>
    g ? summaryOf(g).find((x) => x.metric === label) : undefined;
  const check = (ok: boolean | null, text: string) =>
    lines.push(`${ok === null ? '?' : ok ? 'PASS' : 'FAIL'}  ${text}`);
  const own = group('sends, own channels');
  if (own) {
    const rate = get(own, 'sends/s')?.ratio ?? null;
    check(
      rate === null ? null : rate >= 0.5,
      `sends own channels ≥ 0.50 of the floor's rate: ${fmt(rate, 2)}`,
    );
    const cpu = get(own, 'Node CPU ms / request')?.ratio ?? null;
    check(cpu === null ? null : cpu <= 2, `Node CPU per send ≤ 2× the floor's: ${fmt(cpu, 2)}×`);
    const req = get(own, '… on the request path')?.service ?? null;
    const bg = get(own, '… by background followers')?.service ?? null;
    check(req === null ? null : req <= 3, `request-path statements per send ≤ 3: ${fmt(req, 2)}`);
    check(bg === null ? null : bg <= 0.5, `background statements per send ≤ 0.5: ${fmt(bg, 2)}`);
    const redis = get(own, 'Redis commands / request (all, background too)')?.service ?? null;
    check(
      redis === null ? null : redis <= 2,
      `Redis commands per send ≤ 2 (background included): ${fmt(redis, 2)}`,
    );
  }
  const one = group('sends, one channel');
  if (one) {
    const rate = get(one, 'sends/s')?.ratio ?? null;
    check(
      rate === null ? null : rate >= 0.4,
      `sends in one shared channel ≥ 0.40 of the floor's rate: ${fmt(rate, 2)}`,
    );
  }
  const h1 = group('history, 1 client');
  if (h1) {
    const p99 = get(h1, 'p99 (ms)')?.service ?? null;
    // the page's own statements; the followers' idle probe (one a second) is not the page's
    const st = get(h1, '… on the request path')?.service ?? null;
    const size =
      opts.historyMessages >= 1_000_000
        ? ''
        : ` (at ${opts.historyMessages.toLocaleString('en')} messages, not 1M)`;
    check(p99 === null ? null : p99 < 5, `history page p99 < 5 ms with one client${size}: ${fmt(p99, 2)} ms`);
    check(st === null ? null : st <= 2, `history page ≤ 2 statements: ${fmt(st, 2)}`);
  }
  const inbox = group('inbox, 1 client');
  if (inbox) {
    const pg = get(inbox, 'PostgreSQL CPU ms / request')?.service ?? null;
    check(
      pg === null ? null : pg <= 5,
      `inbox PostgreSQL CPU ≤ 5 ms per call (${opts.inboxChannels} channels): ${fmt(pg, 2)} ms`,
    );
  }
  const emb = group('embedded sends');
  if (emb) {
    const rate = get(emb, 'sends/s')?.service ?? null;
    check(
      rate === null ? null : rate >= 300,
      `embedded ≥ 300 sends/s with ${opts.connections} senders: ${fmt(rate, 0)}`,
    );
  }
  const conn = results.find((s) => s.scenario === 'connect')?.groups[0];
  if (conn) {
    const r = get(conn, 'time to connect all (s)')?.ratio ?? null;
    check(
      r === null ? null : r <= 2,
      `${opts.sockets} sockets connect within 2× of bare Socket.IO: ${fmt(r, 2)}×`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------- main

function ensureFloorDeps(dir: string, modules: string[]): void {
  if (!existsSync(join(dir, 'package.json')))
    throw new SetupError(`floor not found: ${dir}/package.json is missing (pass --floor-dir)`);
  if (modules.every((m) => existsSync(join(dir, 'node_modules', m)))) return;
  log(`${dir}: node_modules missing, running npm ci there ...`);
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit', timeout: 300_000 });
  } catch (e) {
    throw new SetupError(
      `npm ci in ${dir} failed (${String(e)}): run it by hand (\`cd ${dir} && npm ci\`) and retry`,
    );
  }
}

function serviceCommit(dir: string): string {
  try {
    const hash = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync(
      'git',
      ['-C', dir, 'status', '--porcelain', '--untracked-files=no', '--', 'src'],
      { encoding: 'utf8' },
    ).trim();
    return dirty ? `${hash} + uncommitted changes under src/` : hash;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  installSignalHandlers();
  const opts = options();
  const needPg = [...opts.only].some((s) => s !== 'embedded');
  const started = new Date();
  log(
    `service: ${opts.main} (${serviceCommit(opts.serviceDir)}); scenarios: ${[...opts.only].join(', ')}; ${opts.pairs} pairs × ${opts.seconds} s`,
  );
  if (opts.only.has('sends-own') || opts.only.has('sends-one') || opts.only.has('history'))
    ensureFloorDeps(join(opts.floorDir, 'http'), ['express', 'pg']);
  if (opts.only.has('connect')) ensureFloorDeps(join(opts.floorDir, 'sio'), ['socket.io']);

  const env: Env = {
    opts,
    pg: null,
    redis: null,
    encryptionKey: randomBytes(32).toString('base64'),
    helpers: transpileHelpers(['floor-reads', 'sockets']),
    traces: opts.tracing ? await startTraceSink() : null,
  };
  if (needPg) {
    log('starting a private PostgreSQL cluster and Redis ...');
    env.pg = await startPostgres(opts.pgBin, opts.pgOsUser);
    env.redis = await startRedis(BENCH_REDIS_URL);
    for (const db of ['floor', 'chat']) await env.pg.admin(`CREATE DATABASE ${db}`);
    for (const db of ['postgres', 'floor', 'chat'])
      await pgQuery(env.pg.url(db), 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pgQuery(env.pg.url('floor'), readFileSync(join(opts.floorDir, 'http', 'schema.sql'), 'utf8'));
    const v = await env.pg.admin(
      `SELECT version() AS v, current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs`,
    );
    log(
      `  ${String(v[0]!.v).split(',')[0]} on port ${env.pg.port} (synchronous_commit ${String(v[0]!.sc)}, fsync ${String(v[0]!.fs)}); Redis ${env.redis.url}`,
    );
  }

  const results: ScenarioResult[] = [];
  const failures: string[] = [];
  const run = async (s: Scenario, fn: () => Promise<ScenarioResult>) => {
    if (!opts.only.has(s) || interrupted()) return;
    log(`${s} ...`);
    try {
      results.push(await fn());
    } catch (e) {
      const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
      failures.push(`${s}: ${msg.split('\n')[0]}`);
      log(`${s} failed: ${msg}`);
    }
  };
  await run('sends-own', () => scenarioSends(env, false));
  await run('sends-one', () => scenarioSends(env, true));
  await run('history', () => scenarioHistory(env));
  await run('inbox', () => scenarioInbox(env));
  await run('embedded', () => scenarioEmbedded(env));
  await run('connect', () => scenarioConnect(env));

  if (interrupted()) return;
  const meta: Record<string, string> = {
    command: `bench:compare ${process.argv.slice(2).join(' ')}`.trim(),
    service: `${opts.main} (commit ${serviceCommit(opts.serviceDir)}), LOG_LEVEL=${opts.logLevel}${
      env.traces
        ? `, tracing on (every trace sampled; ${env.traces.exports} OTLP exports, ${(env.traces.bytes / 1e6).toFixed(1)} MB)`
        : ''
    }`,
    started: started.toISOString(),
    finished: new Date().toISOString(),
    machine: machine(),
    'load average at the end': la(loadavg()),
  };
  const md = markdown(results, meta);
  const tgt = targets(results, opts);
  process.stdout.write(`\n${md}\n\nTargets:\n${tgt.map((l) => `  ${l}`).join('\n')}\n`);
  if (failures.length)
    process.stdout.write(`\nFailed scenarios:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
  mkdirSync(opts.out, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const json = join(opts.out, `compare-${stamp}.json`);
  writeFileSync(
    json,
    JSON.stringify(
      {
        meta,
        options: { ...opts, only: [...opts.only] },
        targets: tgt,
        failures,
        scenarios: results.map((s) => ({
          ...s,
          groups: s.groups.map((g) => ({ ...g, summary: summaryOf(g), topStatements: topStatements(g, 30) })),
        })),
      },
      null,
      1,
    ),
  );
  writeFileSync(
    join(opts.out, `compare-${stamp}.md`),
    `${md}\n\nTargets:\n\n${tgt.map((l) => `- ${l}`).join('\n')}\n`,
  );
  log(`results: ${json} (+ .md)`);
  if (failures.length) process.exitCode = 1;
}

main()
  .catch((e: unknown) => {
    process.stderr.write(
      `${e instanceof SetupError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    process.exitCode = 1;
  })
  .finally(() => {
    void cleanupAll().then(() => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      process.exit();
    });
  });
