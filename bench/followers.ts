import { spawnSync } from 'child_process';
import { randomBytes, generateKeyPairSync } from 'crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'fs';
import http from 'http';
import { sign } from 'jsonwebtoken';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import {
  API_KEY,
  API_SECRET,
  authHeader,
  BENCH_REDIS_URL,
  freePort,
  loadAverage,
  machine,
  MAIN,
  Server,
  startServer,
  writeBenchmarkSection,
} from './lib';

/**
 * What following the event log costs (docs/PERFORMANCE.md, "Log followers"): the statements the log
 * followers (webhook relay, push relay, realtime publisher) send to PostgreSQL per message sent and
 * per idle second, and whether that depends on the size of the `events` table.
 *
 * It starts a private PostgreSQL 15 cluster (initdb into a temp directory, a free port,
 * shared_preload_libraries=pg_stat_statements; stopped by its PID at the end) and, per build, a fresh
 * database: the service (`node dist/main.js`, SERVICE_ROLE=all, Redis on BENCH_REDIS_URL, push on with
 * a throw-away service account and no devices) with 16 users, a channel each plus one shared channel,
 * and a webhook on `message.created` to a local receiver. Then, for each table size, with the service
 * stopped it pre-seeds the `events` table with SQL (rows of another workspace, 1,000 per transaction so
 * they carry real, distinct transaction ids, spread over the retention window), moves the followers'
 * cursors to the end of the log (as if they had followed it all along), restarts the service and
 * measures, each window after pg_stat_statements_reset():
 *   idle: nothing happens for BENCH_IDLE_SECONDS;
 *   own: 16 senders send back to back for BENCH_DURATION_SECONDS, each in its own channel;
 *   shared: the same 16 senders in one channel.
 * A send window ends when the receiver has every webhook delivery, plus one second for the last passes.
 *
 * Statements are told apart by their text (pg_stat_statements, this database only): follower = what
 * the followers issue to follow the log (look-ahead/probe, settled bound, event reads, cursor reads and
 * writes, delivery rows, their transactions' BEGIN/COMMIT); render = the realtime publisher's envelope
 * rendering (message views, blockers); delivery = webhook attempts (claim, record) and the sweeper;
 * push = push jobs; request = the rest (the REST requests). A BEGIN/COMMIT pair is the followers' for
 * each follower transaction (FOLLOWER_TRANSACTION), the request path's otherwise.
 *
 * `npx ts-node --transpile-only bench/followers.ts [--main=label:path/to/dist/main.js ...] [--sizes=25000,1000000] [--idle-only] [--write]`
 * (default: MAIN, i.e. dist/main.js or BENCH_MAIN; `npm run build` first). `--idle-only` skips the two
 * send windows (the warm-up still sends, so the passes' prepared statement has its generic plan). Environment: BENCH_PG_BIN
 * (default /usr/lib/postgresql/15/bin), BENCH_REDIS_URL, BENCH_DURATION_SECONDS (10), BENCH_IDLE_SECONDS (10).
 */
const PG_BIN = process.env.BENCH_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const SEND_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const SENDERS = 16;
const FILLER_WORKSPACE = '00000000-0000-4000-8000-00000000f111';
const CLK_TCK = 100;

type Category = 'follower' | 'txn' | 'render' | 'delivery' | 'push' | 'retention' | 'request';

/** First match wins. The followers' own statements carry a `log-follower` comment; the rest are the older texts. */
const CATEGORIES: [Category, RegExp][] = [
  ['follower', /log-follower/],
  ['txn', /^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION|SAVEPOINT|RELEASE SAVEPOINT)/i],
  ['retention', /DELETE FROM events/],
  // webhook relay (before): look-ahead, locked cursor + bound, event read, webhook match, cursor write
  ['follower', /event_relay_cursors/],
  ['follower', /WITH b AS \(SELECT COALESCE/],
  ['follower', /SELECT e\.id, e\.workspace_id, e\.type, e\.tx_id::text AS tx_id, e\.position FROM events e/],
  [
    'follower',
    /FROM unnest\(\$1::uuid\[\], \$2::uuid\[\], \$3::text\[\], \$4::xid8\[\]\) WITH ORDINALITY AS b/,
  ],
  ['follower', /INSERT INTO webhook_deliveries/],
  // push relay (before)
  ['follower', /created_at < now\(\) - make_interval\(secs => \$5\) AS stale FROM events/],
  // EventLogReader (realtime before): bound, after, head
  ['follower', /^\s*SELECT COALESCE\(\s*\(SELECT min\(x\) FROM pg_snapshot_xip/],
  [
    'follower',
    /FROM events e\s+WHERE \(e\.tx_id, e\.position\) > \(\$1::xid8, \$2::bigint\) AND e\.tx_id < \$4::xid8/,
  ],
  ['follower', /SELECT e\.tx_id::text AS tx_id, e\.position FROM events e WHERE e\.tx_id < \$1::xid8/],
  // realtime rendering (MessageViews.render) and its blockers
  ['render', /FROM messages msg\s+JOIN channels c ON c\.id = msg\.channel_id/],
  ['render', /FROM message_mentions mm JOIN users u/],
  ['render', /FROM reactions WHERE message_id = ANY/],
  ['render', /CROSS JOIN LATERAL/],
  ['render', /settings->'read_receipts_enabled' AS read_receipts FROM workspaces WHERE id = \$1/],
  ['render', /JOIN blocks b ON b\.blocked_id = msg\.user_id\s+WHERE msg\.id = ANY/],
  // webhook attempts and the sweeper
  ['delivery', /webhook_deliveries|webhook_attempts/],
  // push jobs
  ['push', /FROM events WHERE id = \$1|FROM devices|device_tokens/],
];

/**
 * The first statement of each follower transaction: the webhook relay (before) locked its cursor row in
 * an explicit transaction (BEGIN; SELECT … FOR UPDATE SKIP LOCKED; …; COMMIT). Nothing else the
 * followers do runs in an explicit transaction, and a send runs at most one, so the BEGIN/COMMIT pairs
 * beyond these are the request path's.
 */
const FOLLOWER_TRANSACTION =
  /FROM event_relay_cursors WHERE name = \$1 FOR UPDATE SKIP LOCKED|log-follower:txn/;

function categorize(query: string): Category {
  for (const [c, re] of CATEGORIES) if (re.test(query)) return c;
  return 'request';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- private PostgreSQL cluster

interface Cluster {
  port: number;
  url: (db: string) => string;
  /** CPU of the whole cluster (postmaster, live children, reaped children), milliseconds. */
  cpuMs: () => number;
  stop: () => Promise<void>;
}

function runAs(cmd: string, args: string[], user?: { uid: number; gid: number }): void {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir(), ...(user ?? {}) });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr?.toString() ?? ''}${r.stdout?.toString() ?? ''}`);
}

function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  } catch {
    return null;
  }
}

/** utime + stime (+ cutime + cstime) of a process, in milliseconds. */
function procCpuMs(pid: number, withChildren = false): number {
  const f = statFields(pid);
  if (!f) return 0;
  const n = (i: number) => Number(f[i - 3]);
  return ((n(14) + n(15) + (withChildren ? n(16) + n(17) : 0)) * 1000) / CLK_TCK;
}

function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(Number(d));
    if (f && Number(f[1]) === ppid) out.push(Number(d));
  }
  return out;
}

async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-followers-pg-'));
  const data = join(dir, 'data');
  // initdb refuses to run as root: run the cluster as the postgres system user then
  let user: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres']).stdout.toString().trim());
    user = { uid: id('-u'), gid: id('-g') };
    chownSync(dir, user.uid, user.gid);
  }
  const port = await freePort();
  runAs(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'],
    user,
  );
  appendFileSync(
    join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      `shared_preload_libraries = 'pg_stat_statements'`,
      `pg_stat_statements.max = 10000`,
      `pg_stat_statements.track = top`,
      `pg_stat_statements.track_planning = on`,
      `max_connections = 200`,
      '',
    ].join('\n'),
  );
  runAs(join(PG_BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], user);
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const url = (db: string) => `postgresql://postgres@127.0.0.1:${port}/${db}`;
  await sql(url('postgres'), 'CREATE EXTENSION pg_stat_statements');
  return {
    port,
    url,
    cpuMs: () => procCpuMs(pid, true) + childrenOf(pid).reduce((s, c) => s + procCpuMs(c), 0),
    stop: async () => {
      try {
        process.kill(pid, 'SIGINT'); // fast shutdown
      } catch {
        /* gone */
      }
      for (let i = 0; i < 300 && existsSync(`/proc/${pid}`); i++) await sleep(100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function sql<T extends Record<string, unknown> = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------- the service

/** lib.startServer on the private cluster's database, from the given build. */
function startService(main: string, env: Record<string, string>): Promise<Server> {
  return startServer({ env, drop: async () => undefined }, { LOG_LEVEL: 'warn', ...env }, { main });
}

function token(sub: string): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({ sub, iat, exp: iat + 3600 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY });
}

async function api<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth = authHeader,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** Answers 200 at once; counts distinct events delivered, and when each message's first arrived. */
class Receiver {
  readonly seen = new Set<string>();
  readonly arrived = new Map<string, number>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          event_id: string;
          data?: { message?: { id?: string } };
        };
        this.seen.add(body.event_id);
        const id = body.data?.message?.id;
        if (id && !this.arrived.has(id)) this.arrived.set(id, performance.now());
      } catch {
        /* not ours */
      }
    });
  });
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async waitFor(n: number, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.seen.size < n) {
      if (Date.now() > end) return false;
      await sleep(20);
    }
    return true;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

// ---------------------------------------------------------------- measurement

interface Counts {
  calls: Record<Category, number>;
  /** explicit transactions the followers ran (each a BEGIN and a COMMIT, counted as theirs) */
  followerTransactions: number;
  ms: Record<Category, number>;
  top: { category: Category; calls: number; ms: number; query: string }[];
}

const zero = (): Record<Category, number> => ({
  follower: 0,
  txn: 0,
  render: 0,
  delivery: 0,
  push: 0,
  retention: 0,
  request: 0,
});

async function statements(cluster: Cluster, db: string): Promise<Counts> {
  const rows = await sql<{ query: string; calls: string; ms: number }>(
    cluster.url('postgres'),
    `SELECT s.query, s.calls::text AS calls, s.total_plan_time + s.total_exec_time AS ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
    [db],
  );
  const out: Counts = { calls: zero(), ms: zero(), followerTransactions: 0, top: [] };
  for (const r of rows) {
    const c = categorize(r.query);
    if (c === 'follower' && FOLLOWER_TRANSACTION.test(r.query)) out.followerTransactions += Number(r.calls);
    out.calls[c] += Number(r.calls);
    out.ms[c] += r.ms;
    out.top.push({
      category: c,
      calls: Number(r.calls),
      ms: r.ms,
      query: r.query.replace(/\s+/g, ' ').slice(0, 160),
    });
  }
  out.top.sort((a, b) => b.calls - a.calls);
  return out;
}

interface Window {
  seconds: number;
  sends: number;
  errors: number;
  counts: Counts;
  serverCpuMs: number;
  pgCpuMs: number;
  /** follower statements = tagged/known follower texts + the BEGIN/COMMIT the request path does not account for */
  followerCalls: number;
  lag?: Lag;
}

async function measure(
  cluster: Cluster,
  db: string,
  service: Server,
  work: () => Promise<{ sends: number; errors: number; ids?: string[] }>,
  lagOf?: (ids: string[]) => Promise<Lag>,
): Promise<Window> {
  await sql(cluster.url('postgres'), 'SELECT pg_stat_statements_reset()');
  const cpu0 = procCpuMs(service.pid);
  const pg0 = cluster.cpuMs();
  const t0 = performance.now();
  const { sends, errors, ids } = await work();
  const seconds = (performance.now() - t0) / 1000;
  const serverCpuMs = procCpuMs(service.pid) - cpu0;
  const pgCpuMs = cluster.cpuMs() - pg0;
  const counts = await statements(cluster, db);
  const lag = ids && lagOf ? await lagOf(ids) : undefined; // after reading the statements: it is a statement too
  const followerTxn = Math.min(counts.calls.txn, 2 * counts.followerTransactions);
  return {
    seconds,
    sends,
    errors,
    counts,
    serverCpuMs,
    pgCpuMs,
    followerCalls: counts.calls.follower + followerTxn,
    lag,
  };
}

/** When each sent message's POST was answered (its transaction has committed). */
const answered = new Map<string, number>();

async function sendLoad(
  base: string,
  senders: string[],
  channels: string[],
  seconds: number,
): Promise<{ sends: number; errors: number; ids: string[] }> {
  const ids: string[] = [];
  let sends = 0;
  let errors = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    senders.map(async (s, i) => {
      const auth = `Bearer ${token(s)}`;
      const ch = channels[i % channels.length]!;
      for (let n = 0; Date.now() < until; n++) {
        try {
          const m = await api<{ id: string }>(
            base,
            'POST',
            `/v1/channels/${ch}/messages`,
            { content: `hello ${n} from ${s}` },
            auth,
          );
          answered.set(m.id, performance.now());
          ids.push(m.id);
          sends++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { sends, errors, ids };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** p50 / p99 of: send answered → webhook received (ms), and event written → delivery row written (database clock). */
async function lags(url: string, rx: Receiver, ids: string[]): Promise<Lag> {
  const webhook = ids.filter((id) => rx.arrived.has(id)).map((id) => rx.arrived.get(id)! - answered.get(id)!);
  const rows = await sql<{ ms: number }>(
    url,
    `SELECT extract(epoch FROM d.created_at - e.created_at) * 1000 AS ms
       FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
      WHERE e.type = 'message.created' AND (e.payload->'message'->>'id') = ANY ($1::text[])`,
    [ids],
  );
  const relay = rows.map((r) => Number(r.ms));
  return { webhook: [pct(webhook, 50), pct(webhook, 99)], relay: [pct(relay, 50), pct(relay, 99)] };
}

interface Lag {
  webhook: [number, number];
  relay: [number, number];
}

/** Seeds events of another workspace until the table holds `total` rows: 1,000 per transaction. */
async function seedEvents(url: string, total: number): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = performance.now();
  try {
    await c.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'filler') ON CONFLICT DO NOTHING`, [
      FILLER_WORKSPACE,
    ]);
    let have = Number((await c.query<{ n: string }>('SELECT count(*)::text AS n FROM events')).rows[0]!.n);
    while (have < total) {
      const n = Math.min(1000, total - have);
      await c.query(
        `INSERT INTO events (id, workspace_id, type, payload, created_at)
         SELECT gen_random_uuid(), $1, CASE WHEN g % 8 = 0 THEN 'user.created' ELSE 'message.created' END,
                jsonb_build_object('message', jsonb_build_object('id', gen_random_uuid(), 'content', repeat('x', 120))),
                now() - make_interval(secs => 25 * 86400 * random())
           FROM generate_series(1, $2) g`,
        [FILLER_WORKSPACE, n],
      );
      have += n;
    }
    await c.query('VACUUM ANALYZE events');
    await c.query('CHECKPOINT');
  } finally {
    await c.end();
  }
  return (performance.now() - t0) / 1000;
}

/** As if the followers had followed the whole log: their cursors (rows of event_relay_cursors) at its end (the service is stopped). */
async function cursorsToHead(url: string): Promise<void> {
  const [head] = await sql<{ tx_id: string; position: string }>(
    url,
    // e.tx_id, not the text alias: ORDER BY an output name would sort the text ('999' after '1800')
    `SELECT e.tx_id::text AS tx_id, e.position::text AS position FROM events e ORDER BY e.tx_id DESC, e.position DESC LIMIT 1`,
  );
  if (!head) return;
  await sql(url, `UPDATE event_relay_cursors SET tx_id = $1::xid8, position = $2::bigint`, [
    head.tx_id,
    head.position,
  ]);
}

// ---------------------------------------------------------------- one build

interface SizeResult {
  size: number;
  seedSeconds: number;
  idle: Window;
  own?: Window;
  shared?: Window;
}

interface BuildResult {
  label: string;
  main: string;
  sizes: SizeResult[];
}

async function benchBuild(
  cluster: Cluster,
  label: string,
  main: string,
  sizes: number[],
  verbose: boolean,
  idleOnly: boolean,
): Promise<BuildResult> {
  const db = `followers_${label.replace(/\W/g, '_')}_${randomBytes(3).toString('hex')}`;
  await sql(cluster.url('postgres'), `CREATE DATABASE "${db}"`);
  const url = cluster.url(db);
  const prefix = `${db}:`;
  const dir = mkdtempSync(join(tmpdir(), 'chat-followers-'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const account = join(dir, 'service-account.json');
  writeFileSync(
    account,
    JSON.stringify({
      type: 'service_account',
      project_id: 'bench-followers',
      client_email: 'push@bench-followers.iam.gserviceaccount.com',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    }),
  );
  const env = {
    DATABASE_URL: url,
    REDIS_URL: BENCH_REDIS_URL,
    SERVICE_REDIS_PREFIX: prefix,
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SERVICE_PUSH_SERVICE_ACCOUNT_FILE: account,
  };
  const rx = new Receiver();
  await rx.start();
  let service: Server | null = await startService(main, env);
  const log = (s: string) => process.stdout.write(`[${label}] ${s}\n`);
  try {
    const senders = Array.from({ length: SENDERS }, (_, i) => `s${i}`);
    await api(service.baseUrl, 'POST', '/v1/users', {
      users: senders.map((external_id) => ({ external_id, name: external_id })),
    });
    const own: string[] = [];
    for (const s of senders)
      own.push(
        (
          await api(service.baseUrl, 'POST', '/v1/channels', {
            type: 'group',
            external_id: `own-${s}`,
            created_by: s,
          })
        ).id,
      );
    const shared = (
      await api(service.baseUrl, 'POST', '/v1/channels', {
        type: 'group',
        external_id: 'shared',
        created_by: 's0',
        member_external_ids: senders,
      })
    ).id as string;
    await api(service.baseUrl, 'POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${rx.port}/hook`,
      events: ['message.created'],
    });

    const results: SizeResult[] = [];
    for (const size of sizes) {
      await service?.stop();
      service = null;
      const seedSeconds = await seedEvents(url, size);
      const n = (await sql<{ n: string }>(url, 'SELECT count(*)::text AS n FROM events'))[0]!.n;
      await cursorsToHead(url);
      log(`events table: ${Number(n).toLocaleString('en-US')} rows (seeded in ${seedSeconds.toFixed(1)} s)`);
      service = await startService(main, env);
      const svc = service;
      // warm-up: connections, plans, the realtime lease; then let the deliveries drain
      await sleep(2000);
      const seen = rx.seen.size;
      const warm = await sendLoad(svc.baseUrl, senders, own, 2);
      await rx.waitFor(seen + warm.sends, 120_000);
      await sleep(2000);
      log(`warm-up: ${warm.sends} sends`);

      const idle = await measure(cluster, db, svc, async () => {
        await sleep(IDLE_SECONDS * 1000);
        return { sends: 0, errors: 0 };
      });
      log(`idle: ${fmtIdle(idle)}`);
      if (verbose) dumpTop(idle);

      const window = async (channels: string[]) => {
        const target = rx.seen.size;
        return measure(
          cluster,
          db,
          svc,
          async () => {
            const r = await sendLoad(svc.baseUrl, senders, channels, SEND_SECONDS);
            const ok = await rx.waitFor(target + r.sends, 120_000);
            if (!ok) log(`!! only ${rx.seen.size - target} of ${r.sends} deliveries arrived`);
            await sleep(1000);
            return r;
          },
          (ids) => lags(url, rx, ids),
        );
      };
      if (idleOnly) {
        results.push({ size: Number(n), seedSeconds, idle });
        continue;
      }
      const ownW = await window(own);
      log(`16 → 16: ${fmtSend(ownW)}`);
      if (verbose) dumpTop(ownW);
      const sharedW = await window([shared]);
      log(`16 → 1:  ${fmtSend(sharedW)}`);
      if (verbose) dumpTop(sharedW);
      results.push({ size: Number(n), seedSeconds, idle, own: ownW, shared: sharedW });
    }
    return { label, main, sizes: results };
  } finally {
    await service?.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
    await sql(cluster.url('postgres'), `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => undefined);
  }
}

function dumpTop(w: Window): void {
  for (const t of w.counts.top.slice(0, 25))
    process.stdout.write(
      `    ${t.category.padEnd(9)} ${String(t.calls).padStart(7)} ${t.ms.toFixed(1).padStart(9)} ms  ${t.query}\n`,
    );
}

const per = (x: number, n: number) => (n ? x / n : NaN);
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');

function fmtIdle(w: Window): string {
  return (
    `follower ${f1(w.followerCalls / w.seconds)} statements/s, ${f2(w.counts.ms.follower / w.seconds)} ms/s in PostgreSQL; ` +
    `server CPU ${f1(w.serverCpuMs / w.seconds)} ms/s, PostgreSQL CPU ${f1(w.pgCpuMs / w.seconds)} ms/s`
  );
}

function fmtSend(w: Window): string {
  const n = w.sends;
  return (
    `${n} sends (${f1(n / SEND_SECONDS)}/s, ${w.errors} errors): follower ${f2(per(w.followerCalls, n))} statements/send ` +
    `(${f2(per(w.counts.ms.follower, n))} ms/send in PostgreSQL), render ${f2(per(w.counts.calls.render, n))}, ` +
    `delivery ${f2(per(w.counts.calls.delivery, n))}, push ${f2(per(w.counts.calls.push, n))}, request ${f2(per(w.counts.calls.request + w.counts.calls.txn - (w.followerCalls - w.counts.calls.follower), n))}; ` +
    `server CPU ${f1(per(w.serverCpuMs, n))} ms/send, PostgreSQL CPU ${f1(per(w.pgCpuMs, n))} ms/send` +
    (w.lag
      ? `; webhook lag p50/p99 ${w.lag.webhook.map(f1).join(' / ')} ms, event → delivery row ${w.lag.relay.map(f1).join(' / ')} ms`
      : '')
  );
}

function section(results: BuildResult[], started: Date, loadBefore: string, loadAfter: string): string {
  const rows: string[] = [];
  for (const b of results) {
    for (const s of b.sizes) {
      for (const [name, w] of [
        ['16 → 16', s.own],
        ['16 → 1', s.shared],
      ] as const) {
        if (!w) continue;
        const n = w.sends;
        rows.push(
          `| ${b.label} | ${s.size.toLocaleString('en-US')} | ${name} | ${Math.round(n / SEND_SECONDS)} | **${f2(per(w.followerCalls, n))}** | ${f2(per(w.counts.ms.follower, n))} | ${f2(per(w.counts.calls.render, n))} | ${f2(per(w.counts.calls.delivery, n))} | ${f2(per(w.counts.calls.push, n))} | ${f1(per(w.serverCpuMs, n))} / ${f1(per(w.pgCpuMs, n))} | ${w.lag ? w.lag.relay.map(f1).join(' / ') : '–'} | ${w.lag ? w.lag.webhook.map(f1).join(' / ') : '–'} |`,
        );
      }
    }
  }
  const idle: string[] = [];
  for (const b of results) {
    for (const s of b.sizes) {
      const w = s.idle;
      idle.push(
        `| ${b.label} | ${s.size.toLocaleString('en-US')} | **${f1(w.followerCalls / w.seconds)}** | ${f2(w.counts.ms.follower / w.seconds)} | ${f1((w.counts.calls.delivery + w.counts.calls.retention) / w.seconds)} | ${f1(w.serverCpuMs / w.seconds)} / ${f1(w.pgCpuMs / w.seconds)} |`,
      );
    }
  }
  return [
    `Command: \`npx ts-node --transpile-only bench/followers.ts --write ${results.map((r) => (/\s/.test(r.label) ? `"--main=${r.label}:…"` : `--main=${r.label}:…`)).join(' ')}\`. ` +
      `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${machine()}; load average ${loadBefore} at the start, ${loadAfter} at the end` +
      (Number(loadBefore.split(' / ')[0]) > 1.5
        ? ' (**shared with other work: CPU and throughput are noisy; statement counts are not**).'
        : '.'),
    '',
    'A private PostgreSQL 15 cluster with pg_stat_statements (initdb into a temp directory; stopped at the end), Redis 7, one service process (`node dist/main.js`, SERVICE_ROLE=all: API, realtime publisher, webhook relay and delivery, push relay) per build, ' +
      `16 users each with a channel plus one shared channel, one webhook on \`message.created\` to a local receiver, push on (a throw-away service account, no devices). ` +
      "The `events` table is pre-seeded with SQL (another workspace, 1,000 rows per transaction, so real transaction ids) with the service stopped, and the followers' cursors are put at its end. " +
      `Each window starts with pg_stat_statements_reset(); a send window is 16 senders back to back for ${SEND_SECONDS} s until every webhook delivery arrived, plus 1 s; the idle window is ${IDLE_SECONDS} s.`,
    '',
    '**follower** = statements the log followers make to follow the log (look-ahead / probe, settled bound, event reads, cursor reads and writes, delivery-row inserts, and their BEGIN/COMMIT); ' +
      '**render** = the realtime publisher rendering `message.new` (MessageViews; blockers where a separate query); **delivery** = webhook attempts (claim + record, 2 per delivery) and the sweeper; **push** = push jobs (event + device lookups). ' +
      '**ms in PostgreSQL** = planning + execution time (pg_stat_statements). CPU is per send: the service process / the whole PostgreSQL cluster. ' +
      "**event → delivery row**: the delivery row's `created_at` minus the event's (database clock: how long the event waited for the relay's pass); **send answered → webhook received**: end to end, including the queue and the HTTP attempt.",
    '',
    '| build | events in table | senders → channels | sends/s | follower statements / send | follower ms / send (PostgreSQL) | render / send | delivery / send | push / send | CPU ms / send: service / PostgreSQL | event → delivery row p50 / p99 (ms) | send answered → webhook received p50 / p99 (ms) |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'Idle (nothing sent):',
    '',
    '| build | events in table | follower statements / s | follower ms / s (PostgreSQL) | sweeper + retention statements / s | CPU ms / s: service / PostgreSQL |',
    '|---|---:|---:|---:|---:|---:|',
    ...idle,
  ].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const builds = argv
    .filter((a) => a.startsWith('--main='))
    .map((a) => {
      const v = a.slice(7);
      const i = v.indexOf(':');
      return i > 0 ? { label: v.slice(0, i), main: v.slice(i + 1) } : { label: 'this build', main: v };
    });
  if (!builds.length) builds.push({ label: 'this build', main: MAIN });
  const sizes = (argv.find((a) => a.startsWith('--sizes='))?.slice(8) ?? '25000,1000000')
    .split(',')
    .map(Number);
  const verbose = argv.includes('--verbose');
  const idleOnly = argv.includes('--idle-only');
  const started = new Date();
  const loadBefore = loadAverage();
  process.stdout.write(`machine: ${machine()}; load ${loadBefore}\n`);
  const cluster = await startCluster();
  const results: BuildResult[] = [];
  try {
    for (const b of builds)
      results.push(await benchBuild(cluster, b.label, b.main, sizes, verbose, idleOnly));
  } finally {
    await cluster.stop();
  }
  const loadAfter = loadAverage();
  const body = section(results, started, loadBefore, loadAfter);
  process.stdout.write(`\n${body}\n`);
  if (argv.includes('--write'))
    process.stdout.write(`wrote ${writeBenchmarkSection('Log followers', body)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
