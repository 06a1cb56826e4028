import { ChildProcess, spawn, spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { Client as PgClient } from 'pg';
import { freePort } from '../../support/ports';

/**
 * The fault suite's own PostgreSQL cluster, Redis and service processes, on free ports: never the
 * machine's shared ones, which other suites use while this one stops and restarts its own. Everything
 * started here is stopped by its PID; if the test process dies first, its exit hook kills what is left.
 */

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const MAIN = join(__dirname, '..', '..', '..', 'dist', 'main.js');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const running = new Set<number>();
process.once('exit', () => {
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

export async function poll<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== null && v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${timeoutMs} ms${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`,
      );
    await sleep(everyMs);
  }
}

/** A child's output, last lines only (shown when a test fails). */
class OutputTail {
  private readonly lines: string[] = [];
  constructor(private readonly max = 300) {}
  push(chunk: Buffer | string): void {
    for (const l of chunk.toString().split('\n')) {
      if (!l) continue;
      this.lines.push(l.length > 600 ? `${l.slice(0, 600)}…` : l);
      if (this.lines.length > this.max) this.lines.shift();
    }
  }
  text(n = 60): string {
    return this.lines.slice(-n).join('\n');
  }
  grep(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l));
  }
}

/** A PostgreSQL 15 cluster of our own: initdb into a temp dir (as the `postgres` OS user when we are root), trust auth. */
export class PrivatePostgres {
  private dir = '';
  private user: { uid: number; gid: number } | undefined;
  port = 0;
  /** the postmaster's PID (a restart changes it) */
  pid = 0;

  url(db = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${db}`;
  }

  async start(): Promise<void> {
    await this.makeDir();
    await this.run(join(PG_BIN, 'initdb'), [
      '-D',
      join(this.dir, 'data'),
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    await this.configureAndStart();
  }

  /**
   * A cluster of its own restored from a physical backup of `source`, taken now while it runs:
   * pg_basebackup with the WAL it needs (`-X stream`), which is what CloudNativePG and pgBackRest take.
   */
  async startFromBaseBackup(source: PrivatePostgres): Promise<void> {
    await this.makeDir();
    await this.run(join(PG_BIN, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(source.port),
      '-U',
      'postgres',
      '-D',
      join(this.dir, 'data'),
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    await this.configureAndStart();
  }

  /** Runs a PostgreSQL client tool (pg_dump, pg_restore) as the cluster's OS user, in its directory. */
  tool(name: string, args: string[]): Promise<void> {
    return this.run(join(PG_BIN, name), args);
  }

  /** A path in the cluster's own directory (the OS user of its tools can write there). */
  path(file: string): string {
    return join(this.dir, file);
  }

  private async makeDir(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'chat-faults-pg-'));
    if (process.getuid?.() === 0) {
      const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres']).stdout.toString().trim());
      this.user = { uid: id('-u'), gid: id('-g') };
      if (!Number.isFinite(this.user.uid) || this.user.uid === 0)
        throw new Error('running as root: initdb needs the `postgres` OS user');
      chownSync(this.dir, this.user.uid, this.user.gid);
    }
    this.port = await freePort();
  }

  /** Its own port and socket directory (the last setting of a name wins), then `pg_ctl start`. */
  private async configureAndStart(): Promise<void> {
    const data = join(this.dir, 'data');
    appendFileSync(
      join(data, 'postgresql.conf'),
      [
        '',
        `port = ${this.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${this.dir}'`,
        'max_connections = 200',
        'fsync = off',
        '',
      ].join('\n'),
    );
    await this.run(join(PG_BIN, 'pg_ctl'), [
      '-D',
      data,
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
    this.trackPid();
  }

  /** `pg_ctl restart -m fast`: every connection is terminated (57P01), then the server comes back. */
  async restart(): Promise<void> {
    const before = this.pid;
    await this.run(join(PG_BIN, 'pg_ctl'), [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '60',
      '-m',
      'fast',
      'restart',
    ]);
    running.delete(before);
    this.trackPid();
  }

  async query<T extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new PgClient({ connectionString: this.url() });
    await c.connect();
    try {
      return (await c.query<T>(sql, params)).rows;
    } finally {
      await c.end();
    }
  }

  async stop(): Promise<void> {
    if (this.pid && alive(this.pid)) {
      process.kill(this.pid, 'SIGINT'); // fast shutdown: the postmaster takes its backends along
      if (!(await waitGone(this.pid, 30_000))) process.kill(this.pid, 'SIGQUIT');
      await waitGone(this.pid, 10_000);
    }
    running.delete(this.pid);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = '';
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'log'), 'utf8').slice(-3000);
    } catch {
      return '';
    }
  }

  private trackPid(): void {
    this.pid = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    running.add(this.pid);
  }

  /** Runs a PostgreSQL tool (asynchronously: requests keep flowing while pg_ctl waits). */
  private run(cmd: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, {
        cwd: this.dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' },
        ...(this.user ?? {}),
      });
      const out = new OutputTail();
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => out.push(d));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out.text()}\n${this.log()}`)),
      );
    });
  }
}

/** A redis-server of our own, without persistence: a kill loses everything it held, as a crash does. */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    running.add(child.pid!);
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    await poll(
      `redis-server on ${this.port}`,
      () =>
        probe.connect().then(
          () => true,
          () => false,
        ),
      15_000,
    );
    probe.disconnect();
  }

  /** SIGKILL: gone at once, with all it held. */
  async kill(): Promise<void> {
    const c = this.child;
    this.child = null;
    if (!c?.pid) return;
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    }
    running.delete(c.pid);
  }
}

/**
 * A load script of test/faults/support run as a process of its own (its busy loops must not slow the
 * test's own measurements); resolves with the JSON of the last line it printed.
 */
export function runScript<T>(script: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', join(__dirname, script), ...args],
      { cwd: join(__dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child.pid!);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      running.delete(child.pid!);
      if (code !== 0) return reject(new Error(`${script} exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as T);
    });
  });
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/** One process of the built service (`node dist/main.js`), as production runs it. */
export class ServiceProcess {
  private readonly out = new OutputTail();
  exit: ServiceExit | null = null;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly baseUrl: string,
    /** what it was started with: a replacement gets the same */
    readonly env: Record<string, string>,
  ) {
    child.stdout?.on('data', (d: Buffer) => this.out.push(d));
    child.stderr?.on('data', (d: Buffer) => this.out.push(d));
    child.once('exit', (code, signal) => {
      this.exit = { code, signal, at: Date.now() };
      running.delete(child.pid!);
    });
  }

  /** `main`: another build's dist/main.js (the previous release, test/faults/upgrade.fault-spec.ts). */
  static async start(name: string, env: Record<string, string>, main = MAIN): Promise<ServiceProcess> {
    if (!existsSync(main))
      throw new Error(`${main} is missing: run \`npm run build\` first (npm run test:faults does)`);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        PORT: String(port),
        SERVICE_BASE_URL: baseUrl,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child.pid!);
    const p = new ServiceProcess(name, child, baseUrl, env);
    try {
      // a process that exits during start-up ends the wait at once (an error thrown in here would only be
      // poll's last error, reported at the deadline)
      await poll(
        `${name} ready`,
        async () =>
          p.exit !== null ||
          (await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) })).status === 200,
        120_000,
        200,
      );
      if (p.exit)
        throw new Error(`${name} exited (${p.exit.code ?? p.exit.signal}) during start-up:\n${p.logs()}`);
    } catch (e) {
      await p.stop();
      throw e;
    }
    return p;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exit === null;
  }

  logs(n = 60): string {
    return this.out.text(n);
  }

  logLines(re: RegExp): string[] {
    return this.out.grep(re);
  }

  /** SIGTERM (the service's own graceful shutdown), SIGKILL if it has not gone within 15 s. */
  async stop(): Promise<void> {
    await this.terminate(15_000);
  }

  /**
   * What Kubernetes does to a pod it retires: SIGTERM, then SIGKILL once the grace period is over. Says how
   * the process ended (`killed` when the grace period ran out) and how long after the SIGTERM.
   */
  async terminate(graceMs: number): Promise<{ exit: ServiceExit; afterMs: number; killed: boolean }> {
    const signalled = Date.now();
    let killed = false;
    if (!this.exit) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => {
        killed = true;
        this.child.kill('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    }
    return { exit: this.exit!, afterMs: this.exit!.at - signalled, killed };
  }
}

export interface FaultEnvironment {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  /** two API instances (SERVICE_ROLE=api) */
  apis: [ServiceProcess, ServiceProcess];
  /** the worker (SERVICE_ROLE=worker) */
  worker: ServiceProcess;
  adminToken: string;
  /** the current processes (not the ones a `replace` retired) */
  all: () => ServiceProcess[];
  /** Throws, with the last lines of its output, for any service process that has exited. */
  expectAllAlive: () => void;
  /**
   * A rolling update's new pod: a process like `old` (same role and settings, a port of its own), started
   * and ready, takes `old`'s place in `apis` / `worker`. `old` is left running: retiring it is the caller's.
   */
  replace: (old: ServiceProcess, name: string) => Promise<ServiceProcess>;
  stop: () => Promise<void>;
}

/**
 * PostgreSQL and Redis of our own, two API instances and a worker on them. The first instance migrates
 * the database; the others start once it is ready. `env` goes to every service process.
 */
export async function startEnvironment(env: Record<string, string> = {}): Promise<FaultEnvironment> {
  const pg = new PrivatePostgres();
  const redis = new PrivateRedis();
  const services: ServiceProcess[] = [];
  const adminToken = `admin-${randomBytes(12).toString('hex')}`;
  const stop = async () => {
    await Promise.all(services.map((s) => s.stop()));
    await redis.kill();
    await pg.stop();
  };
  try {
    await Promise.all([pg.start(), redis.start()]);
    const common = {
      DATABASE_URL: pg.url(),
      REDIS_URL: redis.url,
      SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SERVICE_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      ...env,
    };
    services.push(await ServiceProcess.start('api-1', { ...common, SERVICE_ROLE: 'api' }));
    const rest = await Promise.allSettled([
      ServiceProcess.start('api-2', { ...common, SERVICE_ROLE: 'api' }),
      ServiceProcess.start('worker', { ...common, SERVICE_ROLE: 'worker' }),
    ]);
    for (const r of rest) if (r.status === 'fulfilled') services.push(r.value);
    for (const r of rest) if (r.status === 'rejected') throw r.reason;
  } catch (e) {
    await stop();
    throw e;
  }
  const [one, two, worker] = services as [ServiceProcess, ServiceProcess, ServiceProcess];
  const environment: FaultEnvironment = {
    pg,
    redis,
    apis: [one, two],
    worker,
    adminToken,
    all: () => [...environment.apis, environment.worker],
    expectAllAlive: () => {
      const dead = environment.all().filter((s) => !s.alive);
      if (dead.length)
        throw new Error(
          dead
            .map(
              (s) =>
                `${s.name} exited (code ${s.exit!.code}, signal ${s.exit!.signal}); its last output:\n${s.logs()}`,
            )
            .join('\n\n'),
        );
    },
    replace: async (old, name) => {
      const fresh = await ServiceProcess.start(name, old.env);
      services.push(fresh); // stopped with the others from now on (the old one too, if still running)
      const i = environment.apis.indexOf(old);
      if (i >= 0) environment.apis[i] = fresh;
      else if (environment.worker === old) environment.worker = fresh;
      else throw new Error(`${old.name} is not one of the environment's processes`);
      return fresh;
    },
    stop,
  };
  return environment;
}

/**
 * A PostgreSQL cluster and a Redis of the test's own, the settings every service process on them
 * shares (`env`, with an operator token), and the processes started on them, stopped by `stop`.
 */
export class OwnStack {
  readonly pg = new PrivatePostgres();
  readonly redis = new PrivateRedis();
  readonly adminToken = `admin-${randomBytes(12).toString('hex')}`;
  env: Record<string, string> = {};
  private readonly services: ServiceProcess[] = [];

  async start(env: Record<string, string> = {}): Promise<void> {
    await Promise.all([this.pg.start(), this.redis.start()]);
    this.env = {
      DATABASE_URL: this.pg.url(),
      REDIS_URL: this.redis.url,
      SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SERVICE_ADMIN_TOKEN: this.adminToken,
      LOG_LEVEL: 'warn',
      SERVICE_ROLE: 'all',
      ...env,
    };
  }

  /** A service process on the stack (`main`: another build's dist/main.js), with `env` over the shared settings. */
  async service(name: string, env: Record<string, string> = {}, main?: string): Promise<ServiceProcess> {
    const s = await ServiceProcess.start(name, { ...this.env, ...env }, main);
    this.services.push(s);
    return s;
  }

  async stop(): Promise<void> {
    for (const s of this.services) await s.stop();
    await this.redis.kill();
    await this.pg.stop();
  }
}
