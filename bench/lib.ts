import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { createServer } from 'net';
import { cpus, loadavg, tmpdir, totalmem } from 'os';
import { dirname, join } from 'path';
import { Client } from 'pg';

export const ROOT = join(__dirname, '..');
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The build to start; BENCH_MAIN points at another (e.g. a snapshot built outside a busy working tree). */
export const MAIN = process.env.BENCH_MAIN ?? join(ROOT, 'dist', 'main.js');
export const API_KEY = 'pk_bench_key_0001';
export const API_SECRET = 'sk_bench_secret_000000000001';

export type Mode = 'embedded' | 'postgres';

export interface Server {
  baseUrl: string;
  /** milliseconds from spawn to the first 200 from /readyz */
  readyMs: number;
  /** the `node dist/main.js` process (for /proc/<pid>/stat CPU readings) */
  pid: number;
  stop: () => Promise<void>;
}

export interface Storage {
  env: Record<string, string>;
  drop: () => Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function pgAdmin(sql: string): Promise<void> {
  const c = new Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A fresh, empty place to keep data: a new data directory, or a new PostgreSQL database (+ Redis). */
export async function freshStorage(mode: Mode): Promise<Storage> {
  if (mode === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'chat-bench-'));
    return {
      env: { SERVICE_DATA_DIR: dir },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `chat_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await pgAdmin(`CREATE DATABASE "${name}"`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    env: postgresEnv(url.toString(), name),
    drop: () => pgAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** A service's settings for the PostgreSQL at `databaseUrl`, the bench's Redis under a prefix of its own, a new key. */
export function postgresEnv(databaseUrl: string, name: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: BENCH_REDIS_URL,
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SERVICE_REDIS_PREFIX: `${name}:`,
  };
}

/**
 * Spawns `node dist/main.js` the way production runs it and waits until /readyz answers 200, with the
 * per-workspace quotas raised out of the way (a benchmark's clients share one workspace).
 * `opts.main` starts another build (default: MAIN). BENCH_NODE_ARGS adds Node options to the service's
 * command line (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` for an on-CPU profile of each service).
 */
export async function startServer(
  storage: Storage,
  extraEnv: Record<string, string> = {},
  opts: { main?: string } = {},
): Promise<Server> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' };
  Object.assign(env, {
    PORT: String(port),
    SERVICE_BASE_URL: baseUrl,
    SERVICE_BOOTSTRAP_API_KEY: API_KEY,
    SERVICE_BOOTSTRAP_API_SECRET: API_SECRET,
    LOG_LEVEL: 'info',
    // a benchmark's clients are one workspace: its quotas (issue 29) must not cap them
    SERVICE_WORKSPACE_REQUESTS_PER_SECOND: '1000000',
    SERVICE_WORKSPACE_CONCURRENT_REQUESTS: '100000',
    ...storage.env,
    ...extraEnv,
  });
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), opts.main ?? MAIN],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + 60_000;
  let readyMs = -1;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      if (res.status === 200) {
        readyMs = Number(process.hrtime.bigint() - started) / 1e6;
        break;
      }
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  if (readyMs < 0) {
    child.kill('SIGKILL');
    throw new Error(`server not ready within 60 s: ${stderr}`);
  }
  return {
    baseUrl,
    readyMs,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export const authHeader = `Bearer ${API_KEY}:${API_SECRET}`;

/** A backend call with the bench's key pair: the parsed JSON answer (null when empty); any status ≥ 300 throws. */
export async function backendApi<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: authHeader, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
  return (text ? JSON.parse(text) : null) as T;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export const modesFromArgs = (argv: string[]): Mode[] => {
  const only = argv.find((a) => a.startsWith('--mode='))?.slice(7);
  return only === 'embedded' || only === 'postgres' ? [only] : ['embedded', 'postgres'];
};

export const loadAverage = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model?.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${process.platform}`;
}

/**
 * Replaces (or appends) the `## <title>` section of docs/BENCHMARKS.md, leaving the other sections
 * (written by other benchmarks) as they are.
 */
export function writeBenchmarkSection(title: string, body: string): string {
  const file = join(ROOT, 'docs', 'BENCHMARKS.md');
  mkdirSync(dirname(file), { recursive: true });
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\n';
  const section = `## ${title}\n\n${body.replace(/\s*$/, '')}\n`;
  const heading = new RegExp(`^## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \\t]*$`, 'm');
  const start = text.search(heading);
  let out: string;
  if (start < 0) {
    out = `${text.replace(/\s*$/, '')}\n\n${section}`;
  } else {
    const rest = text.slice(start + 1);
    const next = rest.search(/^## /m);
    out = text.slice(0, start) + section + (next < 0 ? '' : `\n${rest.slice(next)}`);
  }
  writeFileSync(file, out.replace(/\n*$/, '\n'));
  return file;
}

/** A `--name=value` (or `--name value`) argument of the command line, or `dflt`. */
export function arg(name: string, dflt: string): string {
  const argv = process.argv;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i]!.startsWith(`--${name}=`)) return argv[i]!.slice(name.length + 3);
    // `--name value` too (it was ignored: a soak of `--minutes 5` ran its default 30)
    const next = argv[i + 1];
    if (argv[i] === `--${name}` && next !== undefined && !next.startsWith('--')) return next;
  }
  return dflt;
}

/** A process's CPU so far (utime + stime from /proc, fields 14 and 15), in ms (USER_HZ = 100). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The search documents of messages seeded with plain INSERTs (no message.created event for the search
 * indexer to follow), written as the indexer writes them (chat_search_doc into message_search) in one
 * statement, with the GIN index dropped first and built after (quicker than entry by entry).
 */
export async function writeSearchDocuments(pg: Client): Promise<void> {
  await pg.query('DROP INDEX message_search_doc');
  await pg.query(
    `INSERT INTO message_search (message_id, channel_id, doc)
     SELECT id, channel_id, chat_search_doc(content, channel_id) FROM messages WHERE deleted_at IS NULL`,
  );
  await pg.query('CREATE INDEX message_search_doc ON message_search USING gin (doc) WITH (fastupdate = off)');
}
