import autocannon from 'autocannon';
import { authHeader, freshStorage, Mode, modesFromArgs, startServer } from './lib';

export interface UsersGetResult {
  mode: Mode;
  connections: number;
  durationSeconds: number;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyAvgMs: number;
  total: number;
  errors: number;
  non2xx: number;
}

const DURATION = Number(process.env.BENCH_DURATION_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

/**
 * GET /v1/users/:external_id with a workspace key pair, on a freshly started production build
 * (`node dist/main.js`, LOG_LEVEL=info, logs discarded). Each request authenticates (key lookup +
 * constant-time compare) and reads the user: two queries.
 */
export async function benchUsersGet(mode: Mode): Promise<UsersGetResult> {
  const storage = await freshStorage(mode);
  const server = await startServer(storage).catch(async (e: unknown) => {
    await storage.drop();
    throw e;
  });
  try {
    const put = await fetch(`${server.baseUrl}/v1/users/ana`, {
      method: 'PUT',
      headers: { Authorization: authHeader, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Ana', metadata: { plan: 'pro' } }),
    });
    if (put.status !== 201) throw new Error(`setup: PUT /v1/users/ana answered ${put.status}`);
    const url = `${server.baseUrl}/v1/users/ana`;
    const headers = { Authorization: authHeader };
    await autocannon({ url, headers, connections: CONNECTIONS, duration: 3 }); // warm-up
    const r = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION });
    return {
      mode,
      connections: CONNECTIONS,
      durationSeconds: DURATION,
      requestsPerSecond: Math.round(r.requests.average),
      latencyP50Ms: r.latency.p50,
      latencyP99Ms: r.latency.p99,
      latencyAvgMs: Math.round(r.latency.average * 100) / 100,
      total: r.requests.total,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
    };
  } finally {
    await server.stop();
    await storage.drop();
  }
}

export function formatUsersGet(r: UsersGetResult): string {
  return (
    `GET /v1/users/:id  ${r.mode.padEnd(8)}  ${r.requestsPerSecond} req/s  p50 ${r.latencyP50Ms} ms  p99 ${r.latencyP99Ms} ms  ` +
    `(avg ${r.latencyAvgMs} ms, ${r.connections} connections, ${r.durationSeconds} s, ${r.total} requests, ${r.errors} errors, ${r.non2xx} non-2xx)`
  );
}

async function main(): Promise<void> {
  for (const mode of modesFromArgs(process.argv.slice(2))) {
    process.stdout.write(`${formatUsersGet(await benchUsersGet(mode))}\n`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${String(e)}\n`);
    process.exit(1);
  });
}
