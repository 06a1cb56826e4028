import { ChildProcess, spawn } from 'child_process';
import Redis from 'ioredis';
import { freePort } from './ports';

/**
 * A redis-server of a test's own on a free port, so stopping it cannot disturb the machine's shared
 * Redis or tests running in parallel. Stopped by its PID only; if the test process dies first, its exit
 * hook kills it.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, empty) on its port and waits until it answers. */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    child.once('exit', () => process.removeListener('exit', kill));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      const up = await probe
        .connect()
        .then(() => probe.ping())
        .then(() => true)
        .catch(() => false);
      probe.disconnect();
      if (up) return;
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not come up`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops it hard (SIGKILL, by PID): everything it held is lost, as in a crash without persistence. */
  async kill(): Promise<void> {
    const c = this.child;
    this.child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }
}
