import { loadAverage, machine, median, modesFromArgs, writeBenchmarkSection } from './lib';
import { benchStartup, formatStartup, StartupResult } from './startup';
import { benchUsersGet, formatUsersGet, UsersGetResult } from './users-get';

/**
 * `npm run bench` (builds dist/ first): start-up time and GET /v1/users/:id, both storage modes unless
 * `--mode=embedded` or `--mode=postgres`; prints the results and writes the "Start-up time" and
 * "GET /v1/users/:id" sections of docs/BENCHMARKS.md (`--no-write` to skip). PostgreSQL mode needs
 * BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres, a superuser: each run
 * creates and drops its own database) and BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 * The realtime and messaging benchmarks have their own scripts (npm run bench:realtime, bench:messaging).
 */
const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')}`;

function header(started: Date, loadBefore: string, loadAfter: string): string {
  return (
    `Command: \`npm run bench\` (builds dist/ if it is stale, then \`npx ts-node --transpile-only bench/run.ts\`). ` +
    `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${machine()}; ` +
    `load average ${loadBefore} at the start, ${loadAfter} at the end` +
    (Number(loadBefore.split(' / ')[0]) > 1.5
      ? ' (**shared with other work: the numbers are noisy, a lower bound**).'
      : '.') +
    (process.env.BENCH_MAIN
      ? ` The service was \`${process.env.BENCH_MAIN}\` (BENCH_MAIN: a build of a snapshot of the working tree).`
      : '')
  );
}

function startupSection(results: StartupResult[], head: string): string {
  const rows = results.map(
    (r) =>
      `| ${r.mode === 'embedded' ? 'embedded (PGlite)' : 'PostgreSQL 15 + Redis 7'} | ${ms(median(r.coldMs))} | ${ms(Math.min(...r.coldMs))} – ${ms(Math.max(...r.coldMs))} | ${ms(median(r.warmMs))} | ${ms(Math.min(...r.warmMs))} – ${ms(Math.max(...r.warmMs))} | ${r.runs} |`,
  );
  return [
    head,
    '',
    'Time from spawning `node dist/main.js` (production build, `LOG_LEVEL=info`, bootstrap key pair set) to the first 200 from `GET /readyz`. ' +
      '**Cold**: a fresh data directory (embedded) or a fresh, empty database (PostgreSQL): the database is created and migrated and the bootstrap workspace written. ' +
      '**Warm**: a restart on what the cold start left behind.',
    '',
    '| mode | cold median (ms) | cold min – max | warm median (ms) | warm min – max | runs |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    "On the embedded database almost all of a cold start is PGlite creating its cluster (initdb inside WebAssembly); migrations take about half a second. PostgreSQL's is dominated by loading the application and running the migrations.",
  ].join('\n');
}

function usersGetSection(results: UsersGetResult[], head: string): string {
  const first = results[0];
  const rows = results.map(
    (r) =>
      `| ${r.mode === 'embedded' ? 'embedded (PGlite)' : 'PostgreSQL 15 + Redis 7'} | ${r.requestsPerSecond.toLocaleString('en-US')} | ${r.latencyP50Ms} | ${r.latencyP99Ms} | ${r.latencyAvgMs} | ${r.total.toLocaleString('en-US')} | ${r.errors} / ${r.non2xx} |`,
  );
  return [
    head,
    '',
    `autocannon, ${first?.connections ?? '?'} connections, ${first?.durationSeconds ?? '?'} s after a 3 s warm-up, against one freshly started \`node dist/main.js\` ` +
      '(`LOG_LEVEL=info`, logs discarded; the load generator shares the same 2 cores). Every request authenticates with the workspace key pair ' +
      '(key lookup + constant-time compare of the secret hash) and reads the user: two queries.',
    '',
    '| mode | requests/s | p50 (ms) | p99 (ms) | mean (ms) | requests | errors / non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'The embedded database runs every query on the one PGlite connection of the process (WebAssembly, single-threaded), so it serialises requests; PostgreSQL serves them from a pool of 20 connections.',
  ].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const modes = modesFromArgs(argv);
  const started = new Date();
  const loadBefore = loadAverage();
  process.stdout.write(`machine: ${machine()}; load ${loadBefore}\n`);
  const startup: StartupResult[] = [];
  for (const mode of modes) {
    startup.push(await benchStartup(mode));
    process.stdout.write(`${formatStartup(startup[startup.length - 1]!)}\n`);
  }
  const usersGet: UsersGetResult[] = [];
  for (const mode of modes) {
    usersGet.push(await benchUsersGet(mode));
    process.stdout.write(`${formatUsersGet(usersGet[usersGet.length - 1]!)}\n`);
  }
  const loadAfter = loadAverage();
  process.stdout.write(`load at the end: ${loadAfter}\n`);
  if (!argv.includes('--no-write')) {
    const head = header(started, loadBefore, loadAfter);
    writeBenchmarkSection('Start-up time', startupSection(startup, head));
    const file = writeBenchmarkSection('GET /v1/users/:id', usersGetSection(usersGet, head));
    process.stdout.write(`wrote ${file}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
