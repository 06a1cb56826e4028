import { ChildProcess, spawn } from 'child_process';
import { sign } from 'jsonwebtoken';
import {
  API_KEY,
  API_SECRET,
  arg,
  backendApi,
  cpuMs,
  freePort,
  freshStorage,
  loadAverage,
  machine,
  median,
  startServer,
  writeBenchmarkSection,
} from './lib';

/**
 * `npm run bench:hook` (needs `npm run build`): what the pre-send hook (CONTRACT §27) adds to a send.
 * One instance (`node dist/main.js`, PostgreSQL + Redis, a fresh database) and a local hook in a process
 * of its own that answers `{"action":"allow"}` at once and measures its own time per call (request
 * received → answer written). One user sends `--sends` REST messages one at a time (so the latency is the
 * send's own, not a queue's) per run; runs alternate hook on and off (on, off, off, on, on, off, …,
 * `--pairs` pairs; the hook's `enabled` toggled between runs). Reports p50/p90/p99 latency, Node CPU per
 * send (utime + stime from /proc), and the added latency: the medians' difference less the hook's own
 * time. Writes "The pre-send hook's added latency" in docs/BENCHMARKS.md (`--no-write`: print only).
 */
const SENDS = Number(arg('sends', '400'));
const PAIRS = Number(arg('pairs', '3'));
const WRITE = !process.argv.includes('--no-write');

const log = (s: string) => process.stdout.write(`[hook ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The hook: answers allow at once; GET /stats returns its own time per call (ms) since the last GET. */
const HOOK_SOURCE = `
const http = require('http');
let own = [];
http.createServer((req, res) => {
  const t0 = process.hrtime.bigint();
  if (req.method === 'GET') { res.end(JSON.stringify(own)); own = []; return; }
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"action":"allow"}', () => own.push(Number(process.hrtime.bigint() - t0) / 1e6));
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

async function startHook(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', HOOK_SOURCE], {
    env: { PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { url: `http://127.0.0.1:${port}/pre-send`, child };
}

interface Run {
  hook: boolean;
  p50: number;
  p90: number;
  p99: number;
  cpuPerSend: number;
  /** The hook's own time per call, median (ms); 0 when off. */
  own: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = loadAverage();
  const storage = await freshStorage('postgres');
  const hook = await startHook();
  const server = await startServer(storage, {
    SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
  }).catch(async (e: unknown) => {
    hook.child.kill();
    await storage.drop();
    throw e;
  });
  const base = server.baseUrl;
  try {
    log(`${machine()}; load ${loadStart}`);
    await backendApi(base, 'POST', '/v1/users', {
      users: [{ external_id: 'hook-a' }, { external_id: 'hook-b' }],
    });
    const channel = (
      await backendApi(base, 'POST', '/v1/channels', {
        type: 'group',
        external_id: 'hook-bench',
        created_by: 'hook-a',
        member_external_ids: ['hook-b'],
      })
    ).id as string;
    const iat = Math.floor(Date.now() / 1000);
    const auth = `Bearer ${sign({ sub: 'hook-a', iat, exp: iat + 7200 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY })}`;
    const setHook = (enabled: boolean) =>
      backendApi(base, 'PATCH', '/v1/workspace/settings', { pre_send_hook: { url: hook.url, enabled } });
    const hookStats = async () =>
      (await (await fetch(hook.url.replace('/pre-send', '/stats'))).json()) as number[];
    const sends = async (count: number, tag: string) => {
      const latencies: number[] = [];
      for (let n = 0; n < count; n++) {
        const t0 = performance.now();
        const res = await fetch(`${base}/v1/channels/${channel}/messages`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({ content: `${tag} ${n}` }),
        });
        if (res.status !== 201) throw new Error(`send answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
      return latencies.sort((a, b) => a - b);
    };
    for (const on of [true, false]) {
      await setHook(on);
      await sends(200, `warm-${on}`);
    }
    await hookStats();
    const order: boolean[] = [];
    for (let r = 0; r < PAIRS; r++) order.push(...(r % 2 ? [false, true] : [true, false]));
    const runs: Run[] = [];
    for (const [i, on] of order.entries()) {
      await setHook(on);
      await sleep(500);
      const cpu0 = cpuMs(server.pid);
      const latencies = await sends(SENDS, `run-${i}`);
      const cpu = (cpuMs(server.pid) - cpu0) / SENDS;
      const own = await hookStats();
      if (on && own.length !== SENDS) throw new Error(`the hook saw ${own.length} calls for ${SENDS} sends`);
      if (!on && own.length) throw new Error(`the disabled hook was called ${own.length} times`);
      const run: Run = {
        hook: on,
        p50: pct(latencies, 50),
        p90: pct(latencies, 90),
        p99: pct(latencies, 99),
        cpuPerSend: cpu,
        own: own.length ? median(own) : 0,
      };
      runs.push(run);
      log(
        `hook ${on ? 'on ' : 'off'}: p50 ${run.p50.toFixed(2)} ms, p90 ${run.p90.toFixed(2)}, p99 ${run.p99.toFixed(2)}, ` +
          `Node CPU ${run.cpuPerSend.toFixed(2)} ms/send, hook's own ${run.own.toFixed(3)} ms`,
      );
    }
    type K = 'p50' | 'p90' | 'p99' | 'cpuPerSend' | 'own';
    const of = (on: boolean, k: K) => median(runs.filter((r) => r.hook === on).map((r) => r[k]));
    const list = (on: boolean, k: K) =>
      runs
        .filter((r) => r.hook === on)
        .map((r) => r[k].toFixed(2))
        .join(', ');
    // each pair's runs are neighbours in time: their difference leaves out the drift between pairs
    const pairs = Array.from({ length: PAIRS }, (_, i) => {
      const [a, b] = [runs[2 * i]!, runs[2 * i + 1]!];
      const [on, off] = a.hook ? [a, b] : [b, a];
      return { p50: on.p50 - off.p50, cpu: on.cpuPerSend - off.cpuPerSend };
    });
    const pairedP50 = median(pairs.map((x) => x.p50));
    const pairedCpu = median(pairs.map((x) => x.cpu));
    const added = pairedP50 - of(true, 'own');
    const body = [
      `Command: \`npm run bench:hook\`. Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${((Date.now() - started) / 60_000).toFixed(1)} min; ` +
        `${machine()}, **shared with other work** (load average ${loadStart} at the start, ${loadAverage()} at the end).`,
      '',
      `One instance (\`node dist/main.js\`, PostgreSQL + Redis) and a local hook in a process of its own that answers \`{"action":"allow"}\` at once. ` +
        `One user sends ${SENDS} REST messages one at a time per run into a 2-member group; the runs alternate the hook on and off (${order.map((o) => (o ? 'on' : 'off')).join(', ')}) after a warm-up. ` +
        `"Hook's own" is the hook process's time per call, request received to answer written.`,
      '',
      "| hook | p50 (ms, each run) | p90 (ms) | p99 (ms) | Node CPU per send (ms) | hook's own (ms) |",
      '|---|---|---|---|---|---|',
      `| on | ${list(true, 'p50')} | ${list(true, 'p90')} | ${list(true, 'p99')} | ${list(true, 'cpuPerSend')} | ${list(true, 'own')} |`,
      `| off | ${list(false, 'p50')} | ${list(false, 'p90')} | ${list(false, 'p99')} | ${list(false, 'cpuPerSend')} | – |`,
      '',
      `Added latency, the median over the pairs of (on − off) p50: ${pairedP50.toFixed(2)} ms (each pair: ${pairs.map((x) => x.p50.toFixed(2)).join(', ')}), ` +
        `of which the hook's own time ${of(true, 'own').toFixed(3)} ms: **${added.toFixed(2)} ms** over the hook's own time (target < 2 ms). ` +
        `Medians of the runs: p50 ${of(true, 'p50').toFixed(2)} on, ${of(false, 'p50').toFixed(2)} off; p90 ${of(true, 'p90').toFixed(2)} on, ${of(false, 'p90').toFixed(2)} off. ` +
        `Node CPU per send: ${of(true, 'cpuPerSend').toFixed(2)} ms on, ${of(false, 'cpuPerSend').toFixed(2)} ms off (paired: +${pairedCpu.toFixed(2)} ms: the call, its signature and the user's row).`,
    ].join('\n');
    process.stdout.write(`\n${body}\n`);
    if (WRITE) log(`wrote ${writeBenchmarkSection("The pre-send hook's added latency", body)}`);
  } finally {
    await server.stop();
    hook.child.kill();
    await storage.drop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
