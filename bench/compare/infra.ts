/**
 * The machinery of bench/compare.ts: a private PostgreSQL cluster (pg_stat_statements preloaded) and
 * a private Redis, both stopped at the end; CPU readings from /proc; pg_stat_statements snapshots;
 * child-process bookkeeping so that everything started here is stopped again (also on error and
 * SIGINT), by PID, and nothing else is touched.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { Client } from 'pg';
import * as ts from 'typescript';
import { freePort } from '../lib';

/** A problem with the set-up (missing binaries, bad options): reported without a stack trace. */
export class SetupError extends Error {}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const log = (s: string) =>
  process.stdout.write(`[compare ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** Rejects after `ms` with a message naming what did not finish. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        t = setTimeout(() => reject(new Error(`${what}: no result within ${Math.round(ms / 1000)} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}

// ---------------------------------------------------------------- cleanup

type Cleanup = {
  name: string;
  run: () => Promise<void>;
  /** last resort from process 'exit' (synchronous) */ kill?: () => void;
};
const cleanups: Cleanup[] = [];

/** Registers a cleanup; returns a function that runs it now (once) and unregisters it. */
export function onCleanup(name: string, run: () => Promise<void>, kill?: () => void): () => Promise<void> {
  const c: Cleanup = { name, run, kill };
  cleanups.push(c);
  let done: Promise<void> | null = null;
  return () => {
    done ??= (async () => {
      const i = cleanups.indexOf(c);
      if (i >= 0) cleanups.splice(i, 1);
      await run();
    })();
    return done;
  };
}

let cleaning: Promise<void> | null = null;
/** Runs every registered cleanup, newest first; each one gets 60 s. */
export function cleanupAll(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const c = cleanups.pop()!;
      await withTimeout(c.run(), 60_000, `cleanup ${c.name}`).catch((e: unknown) =>
        log(`cleanup ${c.name}: ${String(e)}`),
      );
    }
  })();
  return cleaning;
}

let stopping = false;
/** true once SIGINT/SIGTERM arrived: the run is being torn down, its figures are not worth keeping */
export const interrupted = () => stopping;

export function installSignalHandlers(): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      stopping = true;
      log(`${sig}: stopping what this run started`);
      void cleanupAll().then(() => process.exit(130));
    });
  }
  process.once('exit', () => {
    for (const c of cleanups) {
      try {
        c.kill?.();
      } catch {
        /* already gone */
      }
    }
  });
}

/** Stops a child we spawned: `signal`, then SIGKILL after `graceMs`. */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 15_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

// ---------------------------------------------------------------- /proc

let ticks = 0;
function clockTicks(): number {
  if (!ticks) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

interface ProcStat {
  ppid: number;
  /** utime + stime, ms */
  self: number;
  /** cutime + cstime (children that exited and were waited for), ms */
  children: number;
}

function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // fields after "pid (comm) ": state ppid ... utime(14) stime(15) cutime(16) cstime(17)
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ms = 1000 / clockTicks();
  return {
    ppid: Number(f[1]),
    self: (Number(f[11]) + Number(f[12])) * ms,
    children: (Number(f[13]) + Number(f[14])) * ms,
  };
}

/** CPU time (user + system, all threads) of one process so far, ms. */
export function processCpuMs(pid: number): number {
  const s = procStat(pid);
  if (!s) throw new Error(`no /proc/${pid}/stat: the process is gone`);
  return s.self;
}

/**
 * CPU time of a process tree rooted at `pid` (the postmaster): itself, the children it has reaped
 * (backends that exited), and the live children. Only one level deep, which is what PostgreSQL has.
 */
export function treeCpuMs(pid: number): number {
  const root = procStat(pid);
  if (!root) throw new Error(`no /proc/${pid}/stat: the process is gone`);
  let total = root.self + root.children;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const s = procStat(Number(e));
    if (s && s.ppid === pid) total += s.self + s.children;
  }
  return total;
}

// ---------------------------------------------------------------- PostgreSQL

export interface PgCluster {
  port: number;
  pid: number;
  url: (db: string) => string;
  /** CPU of every process of the cluster so far, ms */
  cpuMs: () => number;
  /** a query on the `postgres` database (stats, resets, CHECKPOINT) */
  admin: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  stop: () => Promise<void>;
}

function osUser(name: string): { uid: number; gid: number } {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new SetupError(
      `running as root: initdb needs an unprivileged OS user, and "${name}" does not exist (pass --pg-os-user <name>)`,
    );
  }
}

export async function pgQuery(
  url: string,
  sql: string,
  params: unknown[] = [],
  timeoutMs = 30 * 60_000,
): Promise<Record<string, unknown>[]> {
  const c = new Client({
    connectionString: url,
    statement_timeout: timeoutMs,
    connectionTimeoutMillis: 10_000,
  });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

/**
 * initdb into a temporary directory and start `postgres` on a free port, with pg_stat_statements
 * preloaded (track = all, so nested statements are seen too; they are reported apart). Durability
 * settings stay at their defaults (fsync on, synchronous_commit on), as for the floor.
 */
export async function startPostgres(binDir: string, osUserName: string): Promise<PgCluster> {
  for (const b of ['initdb', 'postgres']) {
    if (!existsSync(join(binDir, b))) {
      throw new SetupError(
        `PostgreSQL binary ${join(binDir, b)} not found: install PostgreSQL 15 or pass --pg-bin <dir with initdb and postgres> (or set PG_BIN)`,
      );
    }
  }
  const user = process.getuid?.() === 0 ? osUser(osUserName) : null;
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  writeFileSync(logFile, '');
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chownSync(logFile, user.uid, user.gid);
  }
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  const ids = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' };

  const init = spawnSync(
    join(binDir, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    {
      ...ids,
      env,
      cwd: dir,
      encoding: 'utf8',
      timeout: 180_000,
    },
  );
  if (init.status !== 0) {
    removeDir();
    throw new Error(
      `initdb failed (${init.error?.message ?? `exit ${init.status}`}): ${(init.stderr || init.stdout || '').slice(-2000)}`,
    );
  }

  const port = await freePort();
  const fd = openSync(logFile, 'a');
  const child = spawn(
    join(binDir, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'pg_stat_statements.track=all',
      '-c',
      // planning is not in total_exec_time: a statement re-planned on every call would hide its cost
      'pg_stat_statements.track_planning=on',
      '-c',
      'pg_stat_statements.max=10000',
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=256MB',
    ],
    { ...ids, env, cwd: dir, stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const tail = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-2000);
    } catch {
      return '';
    }
  };
  const url = (db: string) => `postgresql://postgres@127.0.0.1:${port}/${db}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // fast shutdown
      const quit = setTimeout(() => child.kill('SIGQUIT'), 30_000);
      const kill = setTimeout(() => child.kill('SIGKILL'), 45_000);
      await exited;
      clearTimeout(quit);
      clearTimeout(kill);
    }
    removeDir();
  };
  const stopNow = onCleanup('postgres', stop, () => {
    if (child.exitCode === null) child.kill('SIGQUIT'); // immediate shutdown: the postmaster takes its backends along
  });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const t = tail();
      await stopNow();
      throw new Error(`postgres exited at start-up: ${t}`);
    }
    try {
      await pgQuery(url('postgres'), 'SELECT 1');
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        const t = tail();
        await stopNow();
        throw new Error(`postgres not accepting connections within 60 s (${String(e)}): ${t}`);
      }
      await sleep(200);
    }
  }

  const adminClient = new Client({
    connectionString: url('postgres'),
    statement_timeout: 300_000,
    query_timeout: 310_000,
  });
  await adminClient.connect();
  const stopAll = onCleanup('postgres admin connection', async () => {
    await adminClient.end().catch(() => undefined);
  });
  return {
    port,
    pid: child.pid!,
    url,
    cpuMs: () => treeCpuMs(child.pid!),
    admin: async (sql, params = []) =>
      (await adminClient.query(sql, params)).rows as Record<string, unknown>[],
    stop: async () => {
      await stopAll();
      await stopNow();
    },
  };
}

// ---------------------------------------------------------------- pg_stat_statements

export interface Statement {
  query: string;
  calls: number;
  toplevel: boolean;
  /** total execution time, ms */
  ms: number;
  /** times planned, and the total planning time, ms (track_planning) */
  plans: number;
  planMs: number;
  /** WAL records written (a count of the work, unlike times it does not depend on the machine's load) */
  walRecords: number;
  rows: number;
}

export async function resetStatements(pg: PgCluster): Promise<void> {
  await pg.admin('SELECT pg_stat_statements_reset()');
}

/** Everything pg_stat_statements recorded for one database since the last reset. */
export async function readStatements(pg: PgCluster, db: string): Promise<Statement[]> {
  const rows = await pg.admin(
    `SELECT regexp_replace(s.query, '\\s+', ' ', 'g') AS query, s.calls::float8 AS calls, s.toplevel,
            s.total_exec_time AS ms, s.plans::float8 AS plans, s.total_plan_time AS plan_ms,
            s.wal_records::float8 AS wal_records, s.rows::float8 AS rows
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 ORDER BY s.calls DESC`,
    [db],
  );
  return rows.map((r) => ({
    query: String(r.query),
    calls: Number(r.calls),
    toplevel: r.toplevel === true,
    ms: Number(r.ms),
    plans: Number(r.plans),
    planMs: Number(r.plan_ms),
    walRecords: Number(r.wal_records),
    rows: Number(r.rows),
  }));
}

// ---------------------------------------------------------------- Redis

export interface RedisServer {
  url: string;
  /** set when the machine's Redis is used: the service's key prefix, removed at the end */
  prefix?: string;
  stop: () => Promise<void>;
}

/**
 * Commands Redis has run so far, by command (INFO commandstats), for the commands per request of a run.
 * A private server counts the service's commands only (the floors use no Redis); the INFO itself is one.
 */
export async function redisCommandCounts(url: string): Promise<Map<string, number>> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    const info = await r.info('commandstats');
    const counts = new Map<string, number>();
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(m[1]!, Number(m[2]));
    return counts;
  } finally {
    r.disconnect();
  }
}

/** A private redis-server on a free port (no persistence); the machine's Redis with a key prefix if there is no redis-server. */
export async function startRedis(fallbackUrl: string): Promise<RedisServer> {
  const bin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((b) => existsSync(b));
  if (!bin) {
    const prefix = `bench-compare-${process.pid}-${Date.now().toString(36)}:`;
    log(`no redis-server binary: using ${fallbackUrl} with key prefix ${prefix}`);
    const stop = onCleanup('redis keys', async () => {
      const r = new Redis(fallbackUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await r.connect();
        let cursor = '0';
        do {
          const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await r.del(...keys);
        } while (cursor !== '0');
      } finally {
        r.disconnect();
      }
    });
    return { url: fallbackUrl, prefix, stop };
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-redis-'));
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const stop = onCleanup(
    'redis-server',
    async () => {
      await stopChild(child, 'SIGTERM', 10_000);
      rmSync(dir, { recursive: true, force: true });
    },
    () => child.kill('SIGKILL'),
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`redis-server exited at start-up: ${err}`);
    }
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      break;
    } catch {
      r.disconnect();
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`redis-server not answering within 20 s: ${err}`);
      }
      await sleep(100);
    }
  }
  return { url, stop };
}

// ---------------------------------------------------------------- helpers run with plain node

/**
 * Transpiles bench/compare/<name>.ts files to plain JS in a temporary directory (removed at the end),
 * so helper processes run without the TypeScript compiler in their memory. Modules resolve through
 * NODE_PATH, which the caller sets.
 */
export function transpileHelpers(names: string[]): string {
  const out = mkdtempSync(join(tmpdir(), 'bench-compare-js-'));
  onCleanup('helper scripts', async () => rmSync(out, { recursive: true, force: true }));
  for (const name of names) {
    const { outputText } = ts.transpileModule(readFileSync(join(__dirname, `${name}.ts`), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    writeFileSync(join(out, `${name}.js`), outputText);
  }
  return out;
}
