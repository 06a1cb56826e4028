import {
  arg,
  backendApi,
  cpuMs,
  freshStorage,
  loadAverage,
  machine,
  median,
  startServer,
  writeBenchmarkSection,
} from './lib';

/**
 * `npm run bench:send-cost` (needs `npm run build`): what a send's request path costs in a large channel
 * against a 2-member one (issue: "a send's request path independent of channel size"). One instance
 * (`node dist/main.js`, PostgreSQL + Redis, a fresh database), a group channel of `--members` (5,002 by
 * default: the sender and 5,001 others) and one of 2, the same sender; no sockets connected, so what is
 * measured is the request and what follows it on the instance (the publisher, webhooks, push, unread
 * counts), not the socket writes. After a warm-up, runs of `--sends` REST sends, `--concurrency` at a
 * time, alternate between the channels (big, small, small, big, …, `--rounds` pairs); each run's Node CPU
 * is utime + stime of the service from /proc (its followers' passes included: the process is read
 * after they settle), latency from the client. Writes "A send's cost by channel size" in
 * docs/BENCHMARKS.md (`--no-write`: print only).
 */
const MEMBERS = Number(arg('members', '5002'));
const SENDS = Number(arg('sends', '400'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const ROUNDS = Number(arg('rounds', '3'));
const WRITE = !process.argv.includes('--no-write');
const SENDER = 'cost-sender';

const log = (s: string) =>
  process.stdout.write(`[send-cost ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup(base: string): Promise<{ big: string; small: string }> {
  const others = Array.from({ length: MEMBERS - 1 }, (_, i) => `cost-u${String(i).padStart(5, '0')}`);
  const all = [SENDER, 'cost-partner', ...others];
  for (let i = 0; i < all.length; i += 100)
    await backendApi(base, 'POST', '/v1/users', {
      users: all.slice(i, i + 100).map((external_id) => ({ external_id, name: external_id })),
    });
  const big = (
    await backendApi(base, 'POST', '/v1/channels', {
      type: 'group',
      external_id: 'cost-big',
      created_by: SENDER,
      member_external_ids: others.slice(0, 500),
    })
  ).id!;
  for (let i = 500; i < others.length; i += 500)
    await backendApi(base, 'POST', `/v1/channels/${big}/members`, {
      member_external_ids: others.slice(i, i + 500),
    });
  const small = (
    await backendApi(base, 'POST', '/v1/channels', {
      type: 'group',
      external_id: 'cost-small',
      created_by: SENDER,
      member_external_ids: ['cost-partner'],
    })
  ).id!;
  return { big, small };
}

interface Run {
  channel: 'big' | 'small';
  cpuPerSend: number;
  p50: number;
  p99: number;
}

/** `count` sends, `CONCURRENCY` at a time; the latencies (ms). */
async function sends(base: string, channelId: string, count: number, tag: string): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const started = performance.now();
      await backendApi(base, 'POST', `/v1/channels/${channelId}/messages`, {
        content: `${tag} ${n} hello @cost-partner`,
        user_external_id: SENDER,
      });
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = loadAverage();
  const storage = await freshStorage('postgres');
  const server = await startServer(storage, {
    SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    LOG_LEVEL: 'warn',
  });
  try {
    log(`${machine()}; load ${loadStart}`);
    const channels = await setup(server.baseUrl);
    log(`channels of ${MEMBERS} and 2 members ready`);
    for (const which of ['big', 'small'] as const)
      await sends(server.baseUrl, channels[which], 300, `warm-${which}`);
    const order: ('big' | 'small')[] = [];
    for (let r = 0; r < ROUNDS; r++)
      order.push(...(r % 2 ? (['small', 'big'] as const) : (['big', 'small'] as const)));
    const runs: Run[] = [];
    for (const [i, channel] of order.entries()) {
      await sleep(1_000); // the previous run's followers settle
      const cpu0 = cpuMs(server.pid);
      const latencies = await sends(server.baseUrl, channels[channel], SENDS, `run-${i}`);
      await sleep(1_000);
      // the pause's idle CPU (timers, followers' empty passes) is in both kinds of run alike
      const run: Run = {
        channel,
        cpuPerSend: (cpuMs(server.pid) - cpu0) / SENDS,
        p50: pct(latencies, 50),
        p99: pct(latencies, 99),
      };
      runs.push(run);
      log(
        `${channel}: Node CPU ${run.cpuPerSend.toFixed(2)} ms/send, p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms`,
      );
    }
    const of = (c: 'big' | 'small', k: 'cpuPerSend' | 'p50' | 'p99') =>
      median(runs.filter((r) => r.channel === c).map((r) => r[k]));
    const ratio = (k: 'cpuPerSend' | 'p50' | 'p99') => of('big', k) / of('small', k);
    const list = (c: 'big' | 'small', k: 'cpuPerSend' | 'p50' | 'p99') =>
      runs
        .filter((r) => r.channel === c)
        .map((r) => r[k].toFixed(k === 'cpuPerSend' ? 2 : 1))
        .join(', ');
    const body = [
      `Command: \`npm run bench:send-cost\`. Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${((Date.now() - started) / 60_000).toFixed(1)} min; ` +
        `${machine()}, **shared with other work** (load average ${loadStart} at the start, ${loadAverage()} at the end).`,
      '',
      `One instance (\`node dist/main.js\`, PostgreSQL + Redis), a group channel of ${MEMBERS.toLocaleString('en-US')} members and one of 2, the same sender; ` +
        `no sockets connected (the request path and what follows it on the instance, not the socket writes). ${SENDS} REST sends per run, ${CONCURRENCY} at a time, ` +
        `each mentioning a member; the channels alternated (${order.join(', ')}) after a warm-up. Node CPU: utime + stime of the service from /proc over each run and the second after it.`,
      '',
      '| channel | Node CPU per send (ms, each run) | p50 (ms) | p99 (ms) |',
      '|---|---|---|---|',
      `| ${MEMBERS.toLocaleString('en-US')} members | ${list('big', 'cpuPerSend')} | ${list('big', 'p50')} | ${list('big', 'p99')} |`,
      `| 2 members | ${list('small', 'cpuPerSend')} | ${list('small', 'p50')} | ${list('small', 'p99')} |`,
      '',
      `Large against small, medians: Node CPU ${ratio('cpuPerSend').toFixed(2)}×, p50 ${ratio('p50').toFixed(2)}×, p99 ${ratio('p99').toFixed(2)}× (target ≤ 1.3×).`,
    ].join('\n');
    process.stdout.write(`\n${body}\n`);
    if (WRITE) log(`wrote ${writeBenchmarkSection("A send's cost by channel size", body)}`);
  } finally {
    await server.stop();
    await storage.drop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
