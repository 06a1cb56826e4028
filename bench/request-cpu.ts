import autocannon from 'autocannon';
import { sign } from 'jsonwebtoken';
import { readFileSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { API_KEY, API_SECRET, authHeader, freshStorage, Mode, startServer } from './lib';

/**
 * Node CPU per request of the service process on hot routes: `npx ts-node --transpile-only
 * bench/request-cpu.ts [--mode=postgres|embedded] [name=path/to/dist/main.js[,KEY=value…] ...]` (default:
 * dist/main.js; KEY=value pairs are extra environment for that build, e.g. LOG_LEVEL=silent).
 *
 * For each build: a fresh database (PostgreSQL + Redis by default, so the database's CPU is not in the
 * Node process), `node main.js` with LOG_LEVEL=info (logs discarded), a warm-up, then a fixed number of
 * requests per route with autocannon; the CPU is utime + stime of the service process from
 * /proc/<pid>/stat (10 ms ticks, so enough requests that the tick does not matter). Builds are measured
 * alternately (A B A B …, BENCH_ROUNDS rounds) so a change in machine load hits them alike.
 * BENCH_CPU_PROF=dir also writes a V8 CPU profile of each measured run (.cpuprofile) into dir (it adds
 * some CPU of its own: compare CPU figures without it); BENCH_ROUTE=prefix[,prefix…]
 * measures only the routes whose name starts with one of them.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 6000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

const TICK_US = 1e6 / 100; // USER_HZ on Linux

/**
 * Runs BENCH_REAL_MAIN under the V8 sampling profiler: SIGUSR2 starts a profile, the next SIGUSR2 writes
 * it to BENCH_PROFILE-<n>.cpuprofile (so only the measured requests are in it).
 */
const PROFILED_MAIN = `const inspector = require('inspector');
const fs = require('fs');
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 200 });
let running = false;
let n = 0;
process.on('SIGUSR2', () => {
  if (!running) {
    session.post('Profiler.start');
    running = true;
    return;
  }
  running = false;
  session.post('Profiler.stop', (err, res) => {
    if (!err) fs.writeFileSync(process.env.BENCH_PROFILE + '-' + ++n + '.cpuprofile', JSON.stringify(res.profile));
  });
});
require(process.env.BENCH_REAL_MAIN);
`;

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
}

interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Sample {
  build: string;
  route: string;
  cpuUsPerRequest: number;
  requestsPerSecond: number;
  non2xx: number;
}

async function setup(baseUrl: string): Promise<Route[]> {
  const call = async (method: string, path: string, body: unknown, authorization = authHeader) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { Authorization: authorization, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300)
      throw new Error(`setup: ${method} ${path} answered ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  await call('PUT', '/v1/users/ana', { name: 'Ana', metadata: { plan: 'pro' } });
  await call('PUT', '/v1/users/bo', { name: 'Bo' });
  const ch = await call('POST', '/v1/channels', {
    type: 'group',
    external_id: 'bench',
    created_by: 'ana',
    member_external_ids: ['bo'],
  });
  const iat = Math.floor(Date.now() / 1000);
  const jwt = `Bearer ${sign({ sub: 'ana', iat, exp: iat + 86_000 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY })}`;
  // a full page for the history route, whether or not the send route runs before it
  for (let i = 0; i < 51; i++)
    await call('POST', `/v1/channels/${String(ch.id)}/messages`, { content: `seed ${i}` }, jwt);
  return [
    {
      name: 'GET /v1/users/:id (key pair)',
      method: 'GET',
      path: '/v1/users/ana',
      headers: { Authorization: authHeader },
    },
    {
      name: 'GET /v1/me/channels (JWT)',
      method: 'GET',
      path: '/v1/me/channels',
      headers: { Authorization: jwt },
    },
    {
      name: 'POST …/messages (JWT)',
      method: 'POST',
      path: `/v1/channels/${String(ch.id)}/messages`,
      headers: { Authorization: jwt, 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'hello from the benchmark, nothing to moderate here' }),
    },
    {
      name: 'GET …/messages (JWT)',
      method: 'GET',
      path: `/v1/channels/${String(ch.id)}/messages?limit=50`,
      headers: { Authorization: jwt },
    },
  ];
}

async function measure(build: string, spec: string, mode: Mode): Promise<Sample[]> {
  const storage = await freshStorage(mode);
  // `path/to/main.js,KEY=value,…`: extra environment for this build (e.g. LOG_LEVEL=silent)
  const [first, ...vars] = spec.split(',') as [string, ...string[]];
  let main = first;
  const env: Record<string, string> = { SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000' };
  for (const v of vars) env[v.slice(0, v.indexOf('='))] = v.slice(v.indexOf('=') + 1);
  const profDir = process.env.BENCH_CPU_PROF;
  if (profDir) {
    // --cpu-prof is refused in NODE_OPTIONS: a wrapper starts the profiler in the process instead
    Object.assign(env, { BENCH_REAL_MAIN: main, BENCH_PROFILE: join(profDir, `${build}-${Date.now()}`) });
    main = join(profDir, 'profiled-main.js');
    writeFileSync(main, PROFILED_MAIN);
  }
  const server = await startServer(storage, env, { main });
  const out: Sample[] = [];
  try {
    const routes = await setup(server.baseUrl);
    for (const r of routes.filter(
      (x) => !process.env.BENCH_ROUTE || process.env.BENCH_ROUTE.split(',').some((p) => x.name.startsWith(p)),
    )) {
      const opts = {
        url: `${server.baseUrl}${r.path}`,
        method: r.method,
        headers: r.headers,
        body: r.body,
        connections: CONNECTIONS,
      };
      // `amount`: a fixed number of requests (not in bench/autocannon.d.ts, hence the variables)
      const warm = { ...opts, amount: Math.min(2000, REQUESTS) };
      const run = { ...opts, amount: REQUESTS };
      await autocannon(warm); // warm-up (JIT, caches, pools)
      if (profDir) process.kill(server.pid, 'SIGUSR2');
      const before = cpuTicks(server.pid);
      const res = await autocannon(run);
      const ticks = cpuTicks(server.pid) - before;
      if (profDir) process.kill(server.pid, 'SIGUSR2');
      out.push({
        build,
        route: r.name,
        cpuUsPerRequest: (ticks * TICK_US) / res.requests.total,
        requestsPerSecond: Math.round(res.requests.average),
        non2xx: res.non2xx,
      });
    }
  } finally {
    await server.stop();
    await storage.drop();
  }
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const mode: Mode = args.includes('--mode=embedded') ? 'embedded' : 'postgres';
  const builds = args
    .filter((a) => !a.startsWith('--'))
    .map((a): [string, string] => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]);
  if (!builds.length) builds.push(['current', `${__dirname}/../dist/main.js`]);
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  process.stdout.write(
    `mode ${mode}, ${REQUESTS} requests per route, ${CONNECTIONS} connections, load average ${load()}\n`,
  );
  const all: Sample[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of round % 2 ? [...builds].reverse() : builds) {
      for (const s of await measure(name, path, mode)) {
        all.push(s);
        process.stdout.write(
          `  ${s.build.padEnd(10)} ${s.route.padEnd(30)} ${s.cpuUsPerRequest.toFixed(0).padStart(6)} µs CPU/request  ${String(s.requestsPerSecond).padStart(6)} req/s  non-2xx ${s.non2xx}\n`,
        );
      }
    }
  }
  process.stdout.write(`median of ${ROUNDS} rounds (load average now ${load()}):\n`);
  for (const [name] of builds) {
    for (const route of [...new Set(all.map((s) => s.route))]) {
      const xs = all
        .filter((s) => s.build === name && s.route === route)
        .map((s) => s.cpuUsPerRequest)
        .sort((a, b) => a - b);
      const med =
        xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2;
      process.stdout.write(
        `  ${name.padEnd(10)} ${route.padEnd(30)} ${med.toFixed(0).padStart(6)} µs CPU/request\n`,
      );
    }
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
