import { Canvas, createCanvas } from '@napi-rs/canvas';
import type { ChartConfiguration } from 'chart.js' with { 'resolution-mode': 'import' };
import { readdirSync, readFileSync, writeFileSync } from 'fs';
import http from 'http';
import { sign } from 'jsonwebtoken';
import type { AddressInfo } from 'net';
import { join } from 'path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { io, Socket } from 'socket.io-client';
import { randomBytes } from 'crypto';
import { PrivatePostgres } from '../test/faults/support/processes';
import WebSocket from 'ws';
import {
  API_KEY,
  API_SECRET,
  arg,
  authHeader,
  freePort,
  freshStorage,
  loadAverage,
  machine,
  Mode,
  postgresEnv,
  ROOT,
  Storage,
  startServer,
  writeBenchmarkSection,
} from './lib';

/**
 * The soak benchmark of issue 29: one production process (`node dist/main.js`, API and workers) under
 * mixed traffic for `--minutes` (30 by default): sends, history and inbox reads, sockets that stay and
 * sockets that connect and leave every second, typing, webhooks to a local receiver, and a user's data
 * export every 5 minutes. Each minute it samples the service's heap used after a full GC (through the
 * inspector), its RSS and open file descriptors, PostgreSQL's connections to its database, and the p99
 * of the minute's requests. It draws those over time into a PNG (`docs/soak.png`), fits a slope to each
 * over the last 20 minutes (the last two thirds of a shorter run), and writes the figures to
 * docs/BENCHMARKS.md (not with `--docs=false`).
 *
 * `npm run bench:soak [-- --minutes=30 --mode=postgres|embedded --docs=false]` (default postgres: see
 * lib.ts for BENCH_DATABASE_URL / BENCH_REDIS_URL); `npm run build` first.
 */
const MINUTES = Number(arg('minutes', '30'));
const MODE = arg('mode', 'postgres') as Mode;
const WRITE_DOCS = arg('docs', 'true') !== 'false';
const CHART = arg('chart', join(ROOT, 'docs', 'soak.png'));

const USERS = 60;
const CHANNELS = 12;
const MEMBERS = 10;
/** Operations per second, started on schedule whatever the answers (an open loop). */
const RATES = { send: 30, history: 8, inbox: 4, typing: 5 };
const STEADY_SOCKETS = 40;
/** Sockets connecting (and as many leaving) each second; at most this many live at once. */
const CHURN_LIVE = 5;
const EXPORT_EVERY_MINUTES = 5;
/** Requests the bench leaves unanswered at most, before it skips (and counts) the next. */
const MAX_OUTSTANDING = 300;
const FLAT_PERCENT = { heap: 5, rss: 5, fds: 5, p99: 25 };

interface Sample {
  minute: number;
  heapMb: number;
  rssMb: number;
  fds: number;
  pgConnections: number | null;
  /** The service's Redis keys (its prefix): their number and the bytes Redis holds for them (MEMORY USAGE). */
  redisKeys: number | null;
  redisKb: number | null;
  p99Ms: number;
  sendP99Ms: number;
  requests: number;
  errors: number;
  skipped: number;
  deliveries: number;
  webhooks: number;
  loadAverage: string;
}

// chart.js is an ES module by its types; its CommonJS build is what Node loads here
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Chart, registerables } = require('chart.js') as typeof import('chart.js', {
  with: { 'resolution-mode': 'import' },
});

const log = (s: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${s}`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};
const token = (sub: string) => {
  const iat = Math.floor(Date.now() / 1000);
  return sign({ sub, iat, exp: iat + 24 * 3600 - 60 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY });
};

/** One minute's requests: latencies (all, sends), errors, requests the bench skipped. */
class Window {
  all: number[] = [];
  sends: number[] = [];
  errors = 0;
  /** Errors by status (0: no answer). */
  statuses = new Map<number, number>();
  skipped = 0;
  outstanding = 0;

  reset(): Window {
    const w = Object.assign(new Window(), this);
    this.all = [];
    this.sends = [];
    this.errors = this.skipped = 0;
    this.statuses = new Map();
    return w;
  }
}

async function call(
  w: Window,
  base: string,
  method: string,
  path: string,
  auth: string,
  body?: unknown,
): Promise<any> {
  if (w.outstanding >= MAX_OUTSTANDING) {
    w.skipped++;
    return null;
  }
  w.outstanding++;
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    w.all.push(ms);
    if (method === 'POST' && path.endsWith('/messages')) w.sends.push(ms);
    if (res.status >= 300) {
      w.errors++;
      w.statuses.set(res.status, (w.statuses.get(res.status) ?? 0) + 1);
      return null;
    }
    return text ? JSON.parse(text) : null;
  } catch {
    w.errors++;
    w.statuses.set(0, (w.statuses.get(0) ?? 0) + 1);
    return null;
  } finally {
    w.outstanding--;
  }
}

/** The service's heap used after a full GC, through the inspector (Chrome DevTools Protocol). */
class Inspector {
  private id = 0;
  private readonly pending = new Map<number, (r: any) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (d: Buffer) => {
      const msg = JSON.parse(d.toString()) as { id?: number; result?: unknown };
      if (msg.id) this.pending.get(msg.id)?.(msg.result);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    const ws = new WebSocket(list[0]!.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return new Inspector(ws);
  }

  send(method: string): Promise<any> {
    const id = ++this.id;
    this.ws.send(JSON.stringify({ id, method }));
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  async heapAfterGc(): Promise<number> {
    await this.send('HeapProfiler.collectGarbage');
    const usage = (await this.send('Runtime.getHeapUsage')) as { usedSize: number };
    return usage.usedSize;
  }

  close(): void {
    this.ws.close();
  }
}

/** Counts webhook deliveries; answers 200 at once. */
async function receiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/soak`,
    count: () => n,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function connect(base: string, user: string, onMessage: () => void): Socket {
  const s = io(base, {
    transports: ['websocket'],
    auth: { token: token(user) },
    forceNew: true,
    reconnection: true,
  });
  s.on('message.new', onMessage);
  return s;
}

const procStatusKb = (pid: number, field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/** Least-squares slope (per minute) and the fitted change over the points, as a share of their mean. */
function trend(points: { x: number; y: number }[]): { slope: number; changePercent: number } {
  const n = points.length;
  if (n < 2) return { slope: 0, changePercent: 0 };
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  const slope = sxx ? sxy / sxx : 0;
  const span = points[n - 1]!.x - points[0]!.x;
  return { slope, changePercent: my ? (100 * slope * span) / my : 0 };
}

function drawChart(samples: Sample[], file: string, title: string): void {
  Chart.register(...registerables);
  const panels: { label: string; series: { name: string; data: (number | null)[] }[] }[] = [
    { label: 'Heap used after GC (MB)', series: [{ name: 'heap', data: samples.map((s) => s.heapMb) }] },
    { label: 'RSS (MB)', series: [{ name: 'RSS', data: samples.map((s) => s.rssMb) }] },
    { label: 'Open file descriptors', series: [{ name: 'fds', data: samples.map((s) => s.fds) }] },
    {
      label: 'PostgreSQL connections',
      series: [{ name: 'connections', data: samples.map((s) => s.pgConnections) }],
    },
    {
      label: 'p99 per minute (ms)',
      series: [
        { name: 'all requests', data: samples.map((s) => s.p99Ms) },
        { name: 'sends', data: samples.map((s) => s.sendP99Ms) },
      ],
    },
    {
      label: 'Requests per minute',
      series: [{ name: 'requests', data: samples.map((s) => s.requests) }],
    },
  ];
  const W = 600;
  const H = 300;
  const page = createCanvas(W * 2, H * 3 + 40);
  const ctx = page.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, page.width, page.height);
  ctx.fillStyle = '#222';
  ctx.font = '16px sans-serif';
  ctx.fillText(title, 12, 26);
  const colors = ['#2b6cb0', '#c05621'];
  panels.forEach((p, i) => {
    const canvas: Canvas = createCanvas(W, H);
    const config: ChartConfiguration<'line'> = {
      type: 'line',
      data: {
        labels: samples.map((s) => s.minute),
        datasets: p.series.map((s, j) => ({
          label: s.name,
          data: s.data,
          borderColor: colors[j],
          backgroundColor: colors[j],
          pointRadius: 2,
          borderWidth: 2,
        })),
      },
      options: {
        animation: false,
        responsive: false,
        devicePixelRatio: 1,
        plugins: { title: { display: true, text: p.label }, legend: { display: p.series.length > 1 } },
        scales: {
          x: { title: { display: true, text: 'minute' } },
          y: { beginAtZero: true },
        },
      },
    };
    const chart = new Chart(canvas.getContext('2d'), config);
    ctx.drawImage(canvas, (i % 2) * W, 40 + Math.floor(i / 2) * H);
    chart.destroy();
  });
  writeFileSync(file, page.toBuffer('image/png'));
}

/**
 * Where the data lives. PostgreSQL: a cluster of the bench's own (initdb on a free port, PostgreSQL's
 * defaults, autovacuum on as in any production cluster) unless `--pg=shared` names the machine's
 * (BENCH_DATABASE_URL; this machine's runs with autovacuum off, so its statistics never follow the growing
 * tables and the plans drift: not what a week of production looks like). Redis: the machine's.
 */
async function soakStorage(): Promise<Storage> {
  if (MODE !== 'postgres' || arg('pg', 'private') === 'shared') return freshStorage(MODE);
  const pg = new PrivatePostgres();
  await pg.start();
  return { env: postgresEnv(pg.url(), `soak_${randomBytes(4).toString('hex')}`), drop: () => pg.stop() };
}

/** The service's Redis keys (SERVICE_REDIS_PREFIX) and the bytes Redis holds for them; null without Redis. */
async function redisFootprint(
  env: Record<string, string>,
): Promise<{ redisKeys: number | null; redisKb: number | null }> {
  if (!env.REDIS_URL || !env.SERVICE_REDIS_PREFIX) return { redisKeys: null, redisKb: null };
  const redis = new Redis(env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let keys = 0;
    let bytes = 0;
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${env.SERVICE_REDIS_PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of batch) {
        keys++;
        bytes += Number((await redis.call('MEMORY', 'USAGE', key)) ?? 0);
      }
    } while (cursor !== '0');
    return { redisKeys: keys, redisKb: bytes / 1024 };
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const started = new Date();
  const storage = await soakStorage();
  const inspectPort = await freePort();
  process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --inspect=127.0.0.1:${inspectPort}`;
  const rx = await receiver();
  const server = await startServer(storage, {
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
  });
  const base = server.baseUrl;
  const inspector = await Inspector.connect(inspectPort);
  const pg = MODE === 'postgres' ? new Client({ connectionString: storage.env.DATABASE_URL }) : null;
  await pg?.connect();
  const database = MODE === 'postgres' ? new URL(storage.env.DATABASE_URL!).pathname.slice(1) : '';
  const sockets = new Set<Socket>();
  let timers: NodeJS.Timeout[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.close();
      inspector.close();
      await pg?.end().catch(() => undefined);
      await server.stop();
      await rx.close();
      await storage.drop();
    })());
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void cleanup().finally(() => process.exit(130)));
  try {
    log(`${MODE}, ${MINUTES} min; service pid ${server.pid}; ${machine()}`);
    // setup: users, channels of 10 members each, a webhook for every new message
    const setup = new Window();
    const users = Array.from({ length: USERS }, (_, i) => `u${i}`);
    await call(setup, base, 'POST', '/v1/users', authHeader, {
      users: users.map((u) => ({ external_id: u, name: u })),
    });
    const channels: { id: string; members: string[] }[] = [];
    for (let c = 0; c < CHANNELS; c++) {
      const members = Array.from({ length: MEMBERS }, (_, k) => users[(c * 5 + k) % USERS]!);
      const ch = await call(setup, base, 'POST', '/v1/channels', authHeader, {
        type: 'group',
        external_id: `soak-${c}`,
        created_by: members[0],
        member_external_ids: members.slice(1),
      });
      if (!ch) throw new Error('setup: could not create a channel');
      channels.push({ id: ch.id, members });
    }
    const hook = await call(setup, base, 'POST', '/v1/webhooks', authHeader, {
      url: rx.url,
      events: ['message.created'],
    });
    if (!hook || setup.errors) throw new Error('setup failed');
    const auth = new Map(users.map((u) => [u, `Bearer ${token(u)}`]));
    const channelsOf = new Map(users.map((u) => [u, channels.filter((c) => c.members.includes(u))]));

    let deliveries = 0;
    const onMessage = () => deliveries++;
    const steady: Socket[] = [];
    for (let i = 0; i < STEADY_SOCKETS; i++) {
      const s = connect(base, users[i]!, onMessage);
      sockets.add(s);
      steady.push(s);
    }
    const churn: Socket[] = [];

    const w = new Window();
    let tick = 0;
    const issued = { send: 0, history: 0, inbox: 0, typing: 0 };
    const every = (kind: keyof typeof RATES, fn: (i: number) => void) => {
      // spread the rate per second over ten ticks a second; i counts this kind's operations
      const rate = RATES[kind];
      const n = Math.floor(((tick + 1) * rate) / 10) - Math.floor((tick * rate) / 10);
      for (let k = 0; k < n; k++) fn(issued[kind]++);
    };
    timers.push(
      setInterval(() => {
        every('send', (i) => {
          const u = users[i % USERS]!;
          const ch = channelsOf.get(u)![i % channelsOf.get(u)!.length]!;
          void call(w, base, 'POST', `/v1/channels/${ch.id}/messages`, auth.get(u)!, {
            content: `soak ${i} from ${u}: ${'lorem ipsum '.repeat(1 + (i % 8))}`,
          });
        });
        every('history', (i) => {
          const u = users[(i * 7) % USERS]!;
          const ch = channelsOf.get(u)![0]!;
          void call(w, base, 'GET', `/v1/channels/${ch.id}/messages?limit=50`, auth.get(u)!);
        });
        every('inbox', (i) => {
          const u = users[(i * 11) % USERS]!;
          void call(w, base, 'GET', '/v1/me/channels', auth.get(u)!);
        });
        every('typing', (i) => {
          const k = i % STEADY_SOCKETS;
          const ch = channelsOf.get(users[k]!)![0]!;
          steady[k]!.emit('typing.start', { channel_id: ch.id });
        });
        tick++;
      }, 100),
      setInterval(() => {
        const s = connect(base, users[(tick * 13) % USERS]!, () => undefined);
        sockets.add(s);
        churn.push(s);
        while (churn.length > CHURN_LIVE) {
          const old = churn.shift()!;
          old.close();
          sockets.delete(old);
        }
      }, 1000),
    );

    // an export of one user's data every few minutes, waited for
    const exports: number[] = [];
    let exportFailures = 0;
    const exportOnce = async (n: number) => {
      const t0 = Date.now();
      const req = await call(setup, base, 'POST', `/v1/users/${users[n % USERS]}/exports`, authHeader);
      if (!req) return void exportFailures++;
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        const view = await call(setup, base, 'GET', `/v1/exports/${req.id}`, authHeader);
        if (view?.status === 'pending') continue;
        if (view?.status === 'ready' || view?.status === 'completed') exports.push(Date.now() - t0);
        else exportFailures++;
        return;
      }
    };

    const samples: Sample[] = [];
    let lastDeliveries = 0;
    let lastWebhooks = 0;
    for (let minute = 1; minute <= MINUTES; minute++) {
      if ((minute - 1) % EXPORT_EVERY_MINUTES === 0) void exportOnce(minute);
      await new Promise((r) => setTimeout(r, 60_000));
      const done = w.reset();
      const heap = await inspector.heapAfterGc();
      const pgConnections = pg
        ? Number(
            (
              await pg.query<{ n: string }>(
                'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
                [database],
              )
            ).rows[0]!.n,
          )
        : null;
      const sample: Sample = {
        minute,
        heapMb: heap / 2 ** 20,
        rssMb: procStatusKb(server.pid, 'VmRSS') / 1024,
        fds: readdirSync(`/proc/${server.pid}/fd`).length,
        pgConnections,
        ...(await redisFootprint(storage.env)),
        p99Ms: pct(done.all, 99),
        sendP99Ms: pct(done.sends, 99),
        requests: done.all.length,
        errors: done.errors,
        skipped: done.skipped,
        deliveries: deliveries - lastDeliveries,
        webhooks: rx.count() - lastWebhooks,
        loadAverage: loadAverage(),
      };
      lastDeliveries = deliveries;
      lastWebhooks = rx.count();
      samples.push(sample);
      log(
        `min ${minute}: heap ${sample.heapMb.toFixed(1)} MB, RSS ${sample.rssMb.toFixed(0)} MB, fds ${sample.fds}, ` +
          `pg ${pgConnections ?? '–'}, redis ${sample.redisKeys ?? '–'} keys ${sample.redisKb?.toFixed(0) ?? '–'} KB, p99 ${sample.p99Ms.toFixed(0)} ms (sends ${sample.sendP99Ms.toFixed(0)}), ` +
          `${sample.requests} requests, ${sample.errors} errors ${JSON.stringify(Object.fromEntries(done.statuses))}, ${sample.skipped} skipped, ` +
          `${sample.deliveries} socket deliveries, ${sample.webhooks} webhooks; load ${sample.loadAverage}`,
      );
    }
    for (const t of timers) clearInterval(t);
    timers = [];

    const windowMinutes = Math.min(20, Math.max(2, Math.floor((MINUTES * 2) / 3)));
    const last = samples.slice(-windowMinutes);
    const fit = (f: (s: Sample) => number | null) =>
      trend(last.filter((s) => f(s) !== null).map((s) => ({ x: s.minute, y: f(s)! })));
    const fits = {
      heap: fit((s) => s.heapMb),
      rss: fit((s) => s.rssMb),
      fds: fit((s) => s.fds),
      p99: fit((s) => s.p99Ms),
      pg: fit((s) => s.pgConnections),
      redis: fit((s) => s.redisKb),
    };
    const flat = (k: keyof typeof FLAT_PERCENT) => fits[k].changePercent < FLAT_PERCENT[k];
    const verdict = (['heap', 'rss', 'fds', 'p99'] as const).every(flat);
    const title = `chat-service soak, ${MODE}, ${MINUTES} min, ${started.toISOString().slice(0, 16)}Z`;
    drawChart(samples, CHART, title);
    log(`chart: ${CHART}`);

    const totals = samples.reduce(
      (a, s) => ({
        requests: a.requests + s.requests,
        errors: a.errors + s.errors,
        skipped: a.skipped + s.skipped,
        deliveries: a.deliveries + s.deliveries,
        webhooks: a.webhooks + s.webhooks,
      }),
      { requests: 0, errors: 0, skipped: 0, deliveries: 0, webhooks: 0 },
    );
    const row = (name: string, k: keyof typeof fits, unit: string, limit?: number) =>
      `| ${name} | ${last[0] ? fmt(k, last[0]) : '–'} → ${fmt(k, last[last.length - 1]!)} ${unit} | ` +
      `${fits[k].slope >= 0 ? '+' : ''}${fits[k].slope.toFixed(3)} ${unit}/min | ` +
      `${fits[k].changePercent >= 0 ? '+' : ''}${fits[k].changePercent.toFixed(1)} % | ${limit === undefined ? '–' : `< ${limit} %`} |`;
    const fmt = (k: keyof typeof fits, s: Sample) =>
      ({
        heap: s.heapMb.toFixed(1),
        rss: s.rssMb.toFixed(0),
        fds: String(s.fds),
        p99: s.p99Ms.toFixed(0),
        pg: String(s.pgConnections ?? '–'),
        redis: s.redisKb === null ? '–' : s.redisKb.toFixed(0),
      })[k];
    const body = [
      `\`npm run bench:soak\` (${MINUTES} min, ${MODE}) on ${started.toISOString().slice(0, 10)}, ${machine()}; ` +
        `load average at the end ${loadAverage()}. One production process (API and workers, ` +
        `\`node dist/main.js\`${MODE === 'postgres' ? `, ${arg('pg', 'private') === 'shared' ? "the machine's PostgreSQL" : 'a PostgreSQL 15 cluster of its own (initdb defaults: autovacuum on; fsync off)'} + Redis` : ', embedded'}) under an open loop of ` +
        `${RATES.send} sends/s from ${USERS} users into ${CHANNELS} channels of ${MEMBERS}, ${RATES.history} history ` +
        `pages/s, ${RATES.inbox} inbox reads/s, ${RATES.typing} typing events/s over ${STEADY_SOCKETS} sockets that stay, ` +
        `one socket connecting and one leaving every second, a webhook for every message to a local receiver, ` +
        `and a user's export every ${EXPORT_EVERY_MINUTES} minutes. Sampled each minute: heap used after a full GC ` +
        `(inspector), RSS, open descriptors, PostgreSQL connections to the database, the memory Redis holds for ` +
        `the service's keys (MEMORY USAGE of each key under its prefix), p99 of the minute's requests.`,
      '',
      `![soak chart](soak.png)`,
      '',
      `Trend over the last ${last.length} minutes (least-squares slope; the change it fits over the window, ` +
        `as a share of the mean):`,
      '',
      '| series | first → last of the window | slope | fitted change | flat when |',
      '|---|---|---|---|---|',
      row('heap used after GC', 'heap', 'MB', FLAT_PERCENT.heap),
      row('RSS', 'rss', 'MB', FLAT_PERCENT.rss),
      row('open file descriptors', 'fds', '', FLAT_PERCENT.fds),
      row('p99 of all requests', 'p99', 'ms', FLAT_PERCENT.p99),
      row('PostgreSQL connections', 'pg', ''),
      row("Redis memory of the service's keys", 'redis', 'KB'),
      '',
      `Verdict: ${verdict ? 'no upward trend' : 'GROWING'}. ${totals.requests} requests, ${totals.errors} errors, ` +
        `${totals.skipped} skipped (more than ${MAX_OUTSTANDING} unanswered); ${totals.deliveries} socket deliveries, ` +
        `${totals.webhooks} webhook deliveries; ${exports.length} exports (${exports.map((e) => `${(e / 1000).toFixed(1)} s`).join(', ')}), ` +
        `${exportFailures} failed.`,
      '',
      '| minute | heap MB | RSS MB | fds | PG conns | Redis keys / KB | p99 ms | send p99 ms | requests | errors | deliveries | webhooks | load average |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...samples.map(
        (s) =>
          `| ${s.minute} | ${s.heapMb.toFixed(1)} | ${s.rssMb.toFixed(0)} | ${s.fds} | ${s.pgConnections ?? '–'} | ` +
          `${s.redisKeys ?? '–'} / ${s.redisKb?.toFixed(0) ?? '–'} | ` +
          `${s.p99Ms.toFixed(0)} | ${s.sendP99Ms.toFixed(0)} | ${s.requests} | ${s.errors} | ${s.deliveries} | ${s.webhooks} | ${s.loadAverage} |`,
      ),
    ].join('\n');
    console.log(body);
    if (WRITE_DOCS) log(`written: ${writeBenchmarkSection('Soak (issue 29)', body)}`);
    if (!verdict) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

if (require.main === module)
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
