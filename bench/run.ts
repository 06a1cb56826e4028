import { cpus, totalmem } from 'os';
import { modesFromArgs } from './lib';
import { benchStartup, formatStartup } from './startup';
import { benchUsersGet, formatUsersGet } from './users-get';

/**
 * `npm run bench` (builds dist/ first). Every benchmark, both storage modes unless `--mode=embedded`
 * or `--mode=postgres`. PostgreSQL mode needs BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres,
 * a superuser: each run creates and drops its own database) and BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
async function main(): Promise<void> {
  const modes = modesFromArgs(process.argv.slice(2));
  const cpu = cpus();
  process.stdout.write(
    `machine: ${cpu.length} x ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${process.platform}\n`,
  );
  for (const mode of modes) process.stdout.write(`${formatStartup(await benchStartup(mode))}\n`);
  for (const mode of modes) process.stdout.write(`${formatUsersGet(await benchUsersGet(mode))}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
