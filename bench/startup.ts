import { freshStorage, median, Mode, modesFromArgs, startServer } from './lib';

export interface StartupResult {
  mode: Mode;
  runs: number;
  /** fresh data directory / fresh empty database: migrations run, bootstrap workspace created */
  coldMs: number[];
  /** restart on the data the cold start left behind */
  warmMs: number[];
}

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);

/** Time from spawning `node dist/main.js` to the first 200 from /readyz. */
export async function benchStartup(mode: Mode, runs = RUNS): Promise<StartupResult> {
  const result: StartupResult = { mode, runs, coldMs: [], warmMs: [] };
  for (let i = 0; i < runs; i++) {
    const storage = await freshStorage(mode);
    try {
      const cold = await startServer(storage);
      result.coldMs.push(cold.readyMs);
      await cold.stop();
      const warm = await startServer(storage);
      result.warmMs.push(warm.readyMs);
      await warm.stop();
    } finally {
      await storage.drop();
    }
  }
  return result;
}

const fmt = (xs: number[]) =>
  `median ${Math.round(median(xs))} ms (min ${Math.round(Math.min(...xs))}, max ${Math.round(Math.max(...xs))})`;

export function formatStartup(r: StartupResult): string {
  return `start-up to /readyz  ${r.mode.padEnd(8)}  cold ${fmt(r.coldMs)}; warm ${fmt(r.warmMs)}; ${r.runs} runs`;
}

async function main(): Promise<void> {
  for (const mode of modesFromArgs(process.argv.slice(2))) {
    process.stdout.write(`${formatStartup(await benchStartup(mode))}\n`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${String(e)}\n`);
    process.exit(1);
  });
}
