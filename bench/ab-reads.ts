/**
 * `npm run bench:ab -- --a=<dir> --b=<dir>`: two builds of the service measured at the same time on the
 * read paths (the history page, the inbox), for a before/after judgement that the machine's drift does
 * not decide. bench:compare alternates runs, and on a shared machine one run's costs differ from the
 * next one's by up to a third; here both builds serve at once, on the same PostgreSQL cluster (a
 * database each, seeded alike) and Redis (a key prefix each), so whatever the machine does it does to
 * both, and each round's B ÷ A is a paired ratio. The figures: per call, the Node CPU of each service
 * process, the CPU of the PostgreSQL backends serving it (/proc of each backend of its database), and
 * the execution + planning time of its statements (pg_stat_statements of its database).
 *
 * Options (`--name=value`): --a, --b (each a checkout with dist/main.js) --rounds=5 --seconds=8
 *   --connections=1 --only=history,inbox --history-messages=20000 --thread-roots=20 --inbox-channels=500
 *   --inbox-messages=100 --pg-bin=/usr/lib/postgresql/15/bin --pg-os-user=postgres --out=bench/results
 */
import autocannon from 'autocannon';
import { execFileSync } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { sign } from 'jsonwebtoken';
import { loadavg, tmpdir } from 'os';
import { join, resolve } from 'path';
import {
  cleanupAll,
  installSignalHandlers,
  log,
  onCleanup,
  PgCluster,
  pgQuery,
  processCpuMs,
  readStatements,
  resetStatements,
  startPostgres,
  startRedis,
} from './compare/infra';
import { READ_THREADS_NOTE, seedHistoryChannel, seedInbox, seedReadThreads } from './compare/seed';
import { API_KEY, API_SECRET, arg, backendApi, BENCH_REDIS_URL, machine, median, startServer } from './lib';

const SIDES = ['a', 'b'] as const;
type Side = (typeof SIDES)[number];

function options() {
  const num = (name: string, dflt: number) => Number(arg(name, String(dflt)));
  const a = arg('a', '');
  const b = arg('b', '');
  if (!a || !b)
    throw new Error('usage: npm run bench:ab -- --a=<build dir> --b=<build dir> [--name=value ...]');
  return {
    dirs: { a: resolve(a), b: resolve(b) } as Record<Side, string>,
    rounds: num('rounds', 5),
    seconds: num('seconds', 8),
    connections: num('connections', 1),
    only: new Set(arg('only', 'history,inbox').split(',')),
    historyMessages: num('history-messages', 20_000),
    threadRoots: num('thread-roots', 20),
    inboxChannels: num('inbox-channels', 500),
    inboxMessages: num('inbox-messages', 100),
    pgBin: arg('pg-bin', process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'),
    pgOsUser: arg('pg-os-user', 'postgres'),
    out: arg('out', join(__dirname, 'results')),
  };
}

const userToken = (externalId: string) =>
  sign({ sub: externalId }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY, expiresIn: 6 * 3600 });

interface Service {
  side: Side;
  db: string;
  base: string;
  pid: number;
  commit: string;
}

/** The same data in each build's database: the reader's history page and inbox (bench/compare/seed.ts). */
async function seed(
  pg: PgCluster,
  s: Service,
  o: ReturnType<typeof options>,
): Promise<Record<string, string>> {
  const url = pg.url(s.db);
  await backendApi(s.base, 'POST', '/v1/users', {
    users: ['reader', 'writer'].map((external_id) => ({ external_id, name: external_id })),
  });
  const paths: Record<string, string> = {};
  if (o.only.has('history')) {
    const c = await backendApi(s.base, 'POST', '/v1/channels', {
      type: 'group',
      external_id: 'big',
      name: 'big',
      created_by: 'reader',
      member_external_ids: ['writer'],
    });
    const channel = String(c?.id ?? c?.channel?.id);
    await seedHistoryChannel(url, channel, 'writer', o.historyMessages);
    if (o.threadRoots > 0)
      await seedReadThreads(url, [channel], Math.min(o.threadRoots, 50), 'reader', 'writer');
    paths.history = `/v1/channels/${channel}/messages?limit=50`;
  }
  if (o.only.has('inbox')) {
    await seedInbox(
      url,
      'inbox-ab-0',
      'reader',
      'writer',
      o.inboxChannels,
      o.inboxMessages,
      o.threadRoots > 0 ? 2 : 0,
    );
    paths.inbox = '/v1/me/channels';
  }
  await pgQuery(url, 'VACUUM ANALYZE');
  return paths;
}

/** CPU so far of every backend connected to `db` (pid → ms). */
async function backendsCpu(pg: PgCluster, db: string): Promise<Map<number, number>> {
  const rows = await pg.admin(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [db],
  );
  const out = new Map<number, number>();
  for (const r of rows) {
    try {
      out.set(Number(r.pid), processCpuMs(Number(r.pid)));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

interface Sample {
  requests: number;
  rate: number;
  nodeMs: number;
  pgMs: number;
  stmtMs: number;
  statements: number;
}

/** Both builds under the same load at the same time, `seconds` long. */
async function round(
  pg: PgCluster,
  services: Service[],
  path: Record<Side, string>,
  o: ReturnType<typeof options>,
) {
  await pg.admin('CHECKPOINT');
  await resetStatements(pg);
  const before = await Promise.all(
    services.map(async (s) => ({ node: processCpuMs(s.pid), pg: await backendsCpu(pg, s.db) })),
  );
  const results = await Promise.all(
    services.map(
      (s) =>
        new Promise<autocannon.Result>((res, rej) =>
          autocannon(
            {
              url: s.base,
              connections: o.connections,
              duration: o.seconds,
              requests: [
                {
                  method: 'GET',
                  path: path[s.side],
                  headers: { authorization: `Bearer ${userToken('reader')}` },
                },
              ],
            },
            (err, r) => (err ? rej(err) : res(r)),
          ),
        ),
    ),
  );
  const samples: Sample[] = [];
  for (const [i, s] of services.entries()) {
    const r = results[i]!;
    if (r.non2xx || r.errors) throw new Error(`${s.side}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const after = await backendsCpu(pg, s.db);
    let pgMs = 0;
    for (const [pid, ms] of after) pgMs += ms - (before[i]!.pg.get(pid) ?? 0);
    const stmts = (await readStatements(pg, s.db)).filter((x) => x.toplevel);
    const n = r['2xx'];
    samples.push({
      requests: n,
      rate: n / r.duration,
      nodeMs: (processCpuMs(s.pid) - before[i]!.node) / n,
      pgMs: pgMs / n,
      stmtMs: stmts.reduce((t, x) => t + x.ms + x.planMs, 0) / n,
      statements: stmts.reduce((t, x) => t + x.calls, 0) / n,
    });
  }
  return samples;
}

const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)} %`;

async function main(): Promise<void> {
  installSignalHandlers();
  const o = options();
  const started = new Date();
  const commitOf = (dir: string) => {
    try {
      const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src'], {
        encoding: 'utf8',
      }).trim();
      return (
        execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() +
        (dirty ? '+changes' : '')
      );
    } catch {
      return 'unknown';
    }
  };
  log(
    `a: ${o.dirs.a} (${commitOf(o.dirs.a)}); b: ${o.dirs.b} (${commitOf(o.dirs.b)}); ${o.rounds} rounds × ${o.seconds} s, both at once`,
  );
  const pg = await startPostgres(o.pgBin, o.pgOsUser);
  const redis = await startRedis(BENCH_REDIS_URL);
  const key = randomBytes(32).toString('base64');
  await pgQuery(pg.url('postgres'), 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'); // the admin connection's
  const services: Service[] = [];
  for (const side of SIDES) {
    const db = `chat_${side}`;
    await pg.admin(`CREATE DATABASE ${db}`);
    await pgQuery(pg.url(db), 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const dataDir = mkdtempSync(join(tmpdir(), `bench-ab-${side}-`));
    const server = await startServer(
      {
        env: {
          SERVICE_DATA_DIR: dataDir,
          DATABASE_URL: pg.url(db),
          REDIS_URL: redis.url,
          SERVICE_REDIS_PREFIX: `${redis.prefix ?? ''}ab-${side}:`,
          SERVICE_ENCRYPTION_KEY: key,
        },
        drop: async () => undefined,
      },
      { LOG_LEVEL: 'warn' },
      { main: join(o.dirs[side], 'dist', 'main.js') },
    );
    onCleanup(`service ${side}`, async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    services.push({ side, db, base: server.baseUrl, pid: server.pid, commit: commitOf(o.dirs[side]) });
  }
  log('seeding both databases alike ...');
  const paths = await Promise.all(services.map((s) => seed(pg, s, o)));
  const scenarios = [...o.only].filter((x) => x === 'history' || x === 'inbox');
  const runs: Record<string, { round: number; load: number[]; a: Sample; b: Sample }[]> = {};
  for (const sc of scenarios) {
    const path = { a: paths[0]![sc]!, b: paths[1]![sc]! };
    await round(pg, services, path, { ...o, seconds: 2 }); // warm-up: plans cached, pools filled
    for (let r = 1; r <= o.rounds; r++) {
      const load = loadavg();
      const [a, b] = await round(pg, services, path, o);
      (runs[sc] ??= []).push({ round: r, load, a: a!, b: b! });
      log(
        `${sc} round ${r}: a ${a!.rate.toFixed(0)}/s node ${a!.nodeMs.toFixed(2)} pg ${a!.pgMs.toFixed(2)} stmt ${a!.stmtMs.toFixed(2)} ms/call | ` +
          `b ${b!.rate.toFixed(0)}/s node ${b!.nodeMs.toFixed(2)} pg ${b!.pgMs.toFixed(2)} stmt ${b!.stmtMs.toFixed(2)} ms/call; load ${load.map((x) => x.toFixed(1)).join(' ')}`,
      );
    }
  }
  const lines: string[] = [
    `# bench:ab: ${services.map((s) => `${s.side} = ${s.commit}`).join(', ')}`,
    '',
    `Both builds served at the same time, ${o.connections} client(s) each, ${o.rounds} rounds × ${o.seconds} s; ` +
      `history: newest page of 50 of ${o.historyMessages.toLocaleString('en')} messages; inbox: ${o.inboxChannels} channels × ${o.inboxMessages} messages; ` +
      `thread roots ${o.threadRoots}. ${o.threadRoots > 0 ? READ_THREADS_NOTE('the newest roots (history) and 2 per channel (inbox)') : ''}`,
    `Machine: ${machine()}. Started ${started.toISOString()}.`,
    '',
    '| scenario | per call | a (median) | b (median) | b ÷ a, median of the rounds | b ÷ a per round |',
    '|---|---|---:|---:|---:|---|',
  ];
  const metrics: [keyof Sample, string][] = [
    ['rate', 'calls/s'],
    ['nodeMs', 'Node CPU ms'],
    ['pgMs', 'PostgreSQL backends CPU ms'],
    ['stmtMs', 'statements exec + plan ms'],
    ['statements', 'statements'],
  ];
  for (const [sc, rs] of Object.entries(runs)) {
    for (const [m, label] of metrics) {
      const ratios = rs.map((r) => r.b[m] / r.a[m]);
      lines.push(
        `| ${sc} | ${label} | ${median(rs.map((r) => r.a[m])).toFixed(3)} | ${median(rs.map((r) => r.b[m])).toFixed(3)} | ${pct(median(ratios))} | ${ratios.map(pct).join(', ')} |`,
      );
    }
    lines.push(
      `| ${sc} | load average (1 min) at each round | | | | ${rs.map((r) => r.load[0]!.toFixed(1)).join(', ')} |`,
    );
  }
  const md = lines.join('\n');
  process.stdout.write(`\n${md}\n`);
  mkdirSync(o.out, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  writeFileSync(join(o.out, `ab-${stamp}.md`), `${md}\n`);
  writeFileSync(
    join(o.out, `ab-${stamp}.json`),
    JSON.stringify({ options: { ...o, only: [...o.only] }, services, runs }, null, 2),
  );
  log(`results: ${join(o.out, `ab-${stamp}.md`)} (+ .json)`);
}

main()
  .catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  })
  .finally(() => void cleanupAll().then(() => process.exit()));
