import http from 'http';
import type { AddressInfo } from 'net';
import { cpus } from 'os';
import { Client } from 'pg';
import { authHeader, freshStorage, Mode, modesFromArgs, Server, startServer } from './lib';

/**
 * Webhook delivery benchmarks of issue 5, on a production build (`node dist/main.js`) against a local
 * receiver that answers 200 at once:
 * - deliveries/s: events are written while only an API instance runs (SERVICE_ROLE=api), then one
 *   worker instance (SERVICE_ROLE=worker) starts and drains the backlog: 4 webhooks × N events;
 * - delivery lag, commit → receipt: events written at a steady rate by concurrent writers with the
 *   default process (API + workers); the lag of an event is the time from its write being answered
 *   (the transaction has committed) to the receiver getting it.
 *
 * `npx ts-node --transpile-only bench/webhooks.ts [--mode=postgres|embedded]` (default postgres: needs
 * BENCH_DATABASE_URL and BENCH_REDIS_URL, see lib.ts). `npm run build` first.
 */
const BACKLOG_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 5_000);
const BACKLOG_WEBHOOKS = 4;
const LAG_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const LAG_WRITERS = Number(process.env.BENCH_WEBHOOK_WRITERS ?? 8);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** Answers 200 at once; remembers when each (path, event id) first arrived. */
class BenchReceiver {
  readonly firstSeen = new Map<string, number>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        event_id: string;
        data: { user: { external_id: string } };
      };
      const key = `${req.url}|${body.data.user.external_id}`;
      if (!this.firstSeen.has(key)) this.firstSeen.set(key, at);
      this.onRequest?.();
    });
  });
  onRequest?: () => void;
  port = 0;

  async start(): Promise<void> {
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  count(path: string): number {
    let n = 0;
    for (const k of this.firstSeen.keys()) if (k.startsWith(`${path}|`)) n++;
    return n;
  }

  async waitFor(pred: () => boolean, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out waiting for deliveries');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

async function api(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: authHeader, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

export interface WebhookBench {
  mode: Mode;
  backlog: { events: number; deliveries: number; seconds: number; perSecond: number };
  lag: {
    events: number;
    eventsPerSecond: number;
    p50: number;
    p95: number;
    p99: number;
    max: number;
    stages: Stages | null;
  };
}

async function backlogPhase(mode: Mode, rx: BenchReceiver): Promise<WebhookBench['backlog']> {
  const storage = await freshStorage(mode);
  let apiServer: Server | null = null;
  let worker: Server | null = null;
  try {
    const common = { SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'warn' };
    apiServer = await startServer(storage, { ...common, SERVICE_ROLE: mode === 'postgres' ? 'api' : 'all' });
    const paths = Array.from({ length: BACKLOG_WEBHOOKS }, (_, i) => `/backlog/${i}`);
    for (const p of paths)
      await api(apiServer.baseUrl, 'POST', '/v1/webhooks', { url: rx.url(p), events: ['user.created'] });
    for (let i = 0; i < BACKLOG_EVENTS; i += 100) {
      const users = Array.from({ length: Math.min(100, BACKLOG_EVENTS - i) }, (_, k) => ({
        external_id: `b${i + k}`,
        name: `B ${i + k}`,
      }));
      await api(apiServer.baseUrl, 'POST', '/v1/users', { users });
    }
    const total = BACKLOG_EVENTS * BACKLOG_WEBHOOKS;
    let first = 0;
    rx.onRequest = () => {
      if (!first) first = performance.now();
    };
    const started = performance.now();
    // embedded: one process does it all, the backlog is whatever it has not delivered yet
    if (mode === 'postgres') worker = await startServer(storage, { ...common, SERVICE_ROLE: 'worker' });
    await rx.waitFor(() => paths.reduce((n, p) => n + rx.count(p), 0) >= total, 300_000);
    const done = performance.now();
    rx.onRequest = undefined;
    const seconds = (done - (first || started)) / 1000;
    return { events: BACKLOG_EVENTS, deliveries: total, seconds, perSecond: total / seconds };
  } finally {
    await worker?.stop();
    await apiServer?.stop();
    await storage.drop();
  }
}

/** Where the time goes, from the rows (database clock): p50 / p99 in ms of each stage. */
interface Stages {
  relay: [number, number];
  queue: [number, number];
  http: [number, number];
}

async function stagesOf(databaseUrl: string): Promise<Stages> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ relay: number; queue: number; http: number }>(
      `SELECT extract(epoch FROM d.created_at - e.created_at) * 1000 AS relay,
              extract(epoch FROM a.started_at - d.created_at) * 1000 AS queue,
              a.duration_ms AS http
         FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1`,
    );
    const two = (k: 'relay' | 'queue' | 'http'): [number, number] => [
      pct(
        rows.map((r) => Number(r[k])),
        50,
      ),
      pct(
        rows.map((r) => Number(r[k])),
        99,
      ),
    ];
    return { relay: two('relay'), queue: two('queue'), http: two('http') };
  } finally {
    await c.end();
  }
}

async function lagPhase(mode: Mode, rx: BenchReceiver): Promise<WebhookBench['lag']> {
  const storage = await freshStorage(mode);
  const server = await startServer(storage, {
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
  });
  try {
    await api(server.baseUrl, 'POST', '/v1/webhooks', { url: rx.url('/lag'), events: ['user.created'] });
    const committed = new Map<string, number>();
    const until = Date.now() + LAG_SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: LAG_WRITERS }, async (_, w) => {
        for (let n = 0; Date.now() < until; n++) {
          const id = `l${w}_${n}`;
          await api(server.baseUrl, 'PUT', `/v1/users/${id}`, { name: id });
          committed.set(id, performance.now());
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    await rx
      .waitFor(() => rx.count('/lag') >= committed.size, 60_000)
      .catch((e: Error) => {
        throw new Error(`${e.message}: ${rx.count('/lag')} of ${committed.size} received`);
      });
    const stages = storage.env.DATABASE_URL ? await stagesOf(storage.env.DATABASE_URL) : null;
    const lags = [...committed].map(([id, at]) => rx.firstSeen.get(`/lag|${id}`)! - at);
    return {
      events: committed.size,
      eventsPerSecond: committed.size / elapsed,
      p50: pct(lags, 50),
      p95: pct(lags, 95),
      p99: pct(lags, 99),
      max: Math.max(...lags),
      stages,
    };
  } finally {
    await server.stop();
    await storage.drop();
  }
}

export async function benchWebhooks(mode: Mode): Promise<WebhookBench> {
  const rx = new BenchReceiver();
  await rx.start();
  try {
    const backlog = await backlogPhase(mode, rx);
    const lag = await lagPhase(mode, rx);
    return { mode, backlog, lag };
  } finally {
    await rx.close();
  }
}

export function formatWebhooks(r: WebhookBench): string {
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  return [
    `webhooks [${r.mode}${r.mode === 'postgres' ? ' + Redis' : ''}]`,
    `  throughput: ${r.backlog.deliveries} deliveries (${r.backlog.events} events × ${BACKLOG_WEBHOOKS} webhooks) drained by one ` +
      `${r.mode === 'postgres' ? 'worker instance' : 'process'} in ${r.backlog.seconds.toFixed(2)} s = ${Math.round(r.backlog.perSecond)} deliveries/s`,
    `  lag commit → receipt: ${r.lag.events} events at ${Math.round(r.lag.eventsPerSecond)}/s from ${LAG_WRITERS} writers: ` +
      `p50 ${ms(r.lag.p50)}, p95 ${ms(r.lag.p95)}, p99 ${ms(r.lag.p99)}, max ${ms(r.lag.max)}`,
    ...(r.lag.stages
      ? [
          `  stages p50 / p99: event transaction start → delivery row ${r.lag.stages.relay.map(ms).join(' / ')}; ` +
            `delivery row → attempt start ${r.lag.stages.queue.map(ms).join(' / ')}; HTTP attempt ${r.lag.stages.http.map(ms).join(' / ')}`,
        ]
      : []),
  ].join('\n');
}

if (require.main === module) {
  (async () => {
    const args = process.argv.slice(2);
    const modes = args.some((a) => a.startsWith('--mode=')) ? modesFromArgs(args) : (['postgres'] as Mode[]);
    process.stdout.write(
      `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}\n`,
    );
    for (const mode of modes) process.stdout.write(`${formatWebhooks(await benchWebhooks(mode))}\n`);
  })().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
