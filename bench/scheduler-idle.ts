/**
 * `npm run bench:scheduler`: the one durable scheduler's idle cost (CONTRACT §25) with 0 and with
 * --pending (100,000) reminders, as many scheduled messages and as many open polls with a closes_at
 * (CONTRACT §28) pending far ahead, on a private PostgreSQL cluster migrated by the
 * service, the service running alone (SERVICE_ROLE=all, SERVICE_SCHEDULER_INTERVAL_MS default) and idle.
 * Alternated (0, N, N, 0, ...: --pairs). Per window of --seconds: the scheduler's passes (calls of its
 * claim statement), their execution time and shared buffers touched per pass (pg_stat_statements), and
 * the CPU of every PostgreSQL process and of the service per second. An index probe per pass stays the
 * same whatever is pending; a scan would grow with it.
 *
 * Options: --pending 100000 --seconds 20 --pairs 3 --pg-bin /usr/lib/postgresql/15/bin --pg-os-user postgres
 */
import { randomBytes } from 'crypto';
import { loadavg } from 'os';
import { authHeader, BENCH_REDIS_URL, median, startServer } from './lib';
import {
  cleanupAll,
  installSignalHandlers,
  log,
  PgCluster,
  pgQuery,
  resetStatements,
  startPostgres,
  treeCpuMs,
} from './compare/infra';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const PG_BIN = flag('pg-bin', process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin');
const PENDING = Number(flag('pending', '100000'));
const SECONDS = Number(flag('seconds', '20'));
const PAIRS = Number(flag('pairs', '3'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sources whose pass statement is measured, found in pg_stat_statements by their text. */
const SOURCES = [
  { name: 'reminders', like: '%FROM reminders r WHERE r.remind_at <= statement_timestamp()%' },
  { name: 'scheduled messages', like: '%SELECT s.id FROM scheduled_messages s%' },
  {
    name: 'poll closing',
    like: '%WHERE closed_at IS NULL AND closes_at IS NOT NULL AND closes_at <= statement_timestamp()%',
  },
] as const;

interface Window {
  pending: number;
  /** Passes of the first source (every source is asked once per pass). */
  passes: number;
  /** Per source, in SOURCES' order. */
  msPerPass: number[];
  buffersPerPass: number[];
  pgCpuMsPerSecond: number;
  nodeCpuMsPerSecond: number;
  load: number;
}

async function call(baseUrl: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: authHeader, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Makes `n` reminders, `n` scheduled messages and `n` polls pending (from 1 day ahead, 5 minutes apart), or none. */
async function setPending(pg: PgCluster, n: number): Promise<void> {
  await pgQuery(pg.url('chat'), `DELETE FROM reminders`);
  await pgQuery(pg.url('chat'), `DELETE FROM scheduled_messages`);
  await pgQuery(pg.url('chat'), `DELETE FROM messages WHERE type = 'poll'`); // their polls go with them
  if (n > 0)
    await pgQuery(
      pg.url('chat'),
      `WITH m AS (
         INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), c.workspace_id, c.id, NULL, 'system', 'poll', 'poll ' || g, now()
           FROM channels c, generate_series(1, $1) g WHERE c.external_id = 'team'
         RETURNING id, workspace_id, content)
       INSERT INTO polls (id, workspace_id, message_id, question, closes_at, created_at)
       SELECT gen_random_uuid(), m.workspace_id, m.id, m.content,
              now() + interval '1 day' + (split_part(m.content, ' ', 2)::int * interval '5 minutes'), now()
         FROM m`,
      [n],
    );
  await pgQuery(pg.url('chat'), 'VACUUM ANALYZE polls');
  if (n > 0)
    await pgQuery(
      pg.url('chat'),
      `INSERT INTO scheduled_messages (id, workspace_id, channel_id, user_id, by_user, content, scheduled_at, created_at, updated_at)
       SELECT gen_random_uuid(), m.workspace_id, m.channel_id, t.user_id, true, 'later ' || t.k,
              now() + interval '1 day' + (t.k * interval '5 minutes'), now(), now()
         FROM bench_targets t JOIN messages m ON m.id = t.message_id
        WHERE t.k <= $1`,
      [n],
    );
  await pgQuery(pg.url('chat'), 'VACUUM ANALYZE scheduled_messages');
  if (n > 0)
    await pgQuery(
      pg.url('chat'),
      `INSERT INTO reminders (id, workspace_id, channel_id, user_id, message_id, remind_at, created_at, updated_at)
       SELECT gen_random_uuid(), m.workspace_id, m.channel_id, t.user_id, m.id,
              now() + interval '1 day' + (t.k * interval '5 minutes'), now(), now()
         FROM bench_targets t JOIN messages m ON m.id = t.message_id
        WHERE t.k <= $1`,
      [n],
    );
  await pgQuery(pg.url('chat'), 'VACUUM ANALYZE reminders');
}

async function window(pg: PgCluster, serverPid: number, pending: number): Promise<Window> {
  await setPending(pg, pending);
  const [count] = (await pgQuery(pg.url('chat'), `SELECT count(*)::int AS n FROM reminders`)) as {
    n: number;
  }[];
  const n = count?.n;
  if (n !== pending) throw new Error(`expected ${pending} pending reminders, found ${n}`);
  await sleep(1500);
  await resetStatements(pg);
  const pg0 = pg.cpuMs();
  const node0 = treeCpuMs(serverPid);
  await sleep(SECONDS * 1000);
  const pgMs = pg.cpuMs() - pg0;
  const nodeMs = treeCpuMs(serverPid) - node0;
  const measured = [];
  for (const source of SOURCES) {
    const rows = await pg.admin(
      `SELECT s.calls::float8 AS calls, s.total_exec_time AS ms,
              (s.shared_blks_hit + s.shared_blks_read)::float8 AS blocks
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = 'chat' AND s.query LIKE '${source.like}'`,
    );
    const calls = rows.reduce((a, r) => a + Number(r.calls), 0);
    measured.push({
      calls,
      ms: rows.reduce((a, r) => a + Number(r.ms), 0) / Math.max(1, calls),
      blocks: rows.reduce((a, r) => a + Number(r.blocks), 0) / Math.max(1, calls),
    });
  }
  return {
    pending,
    passes: measured[0]!.calls,
    msPerPass: measured.map((x) => x.ms),
    buffersPerPass: measured.map((x) => x.blocks),
    pgCpuMsPerSecond: pgMs / SECONDS,
    nodeCpuMsPerSecond: nodeMs / SECONDS,
    load: loadavg()[0]!,
  };
}

async function main(): Promise<void> {
  installSignalHandlers();
  const pg = await startPostgres(PG_BIN, flag('pg-os-user', 'postgres'));
  try {
    await pg.admin('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pg.admin('CREATE DATABASE chat');
    const server = await startServer(
      {
        env: {
          DATABASE_URL: pg.url('chat'),
          REDIS_URL: BENCH_REDIS_URL,
          SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          SERVICE_REDIS_PREFIX: `scheduler-idle-${process.pid}:`,
        },
        drop: async () => undefined,
      },
      { LOG_LEVEL: 'warn' },
    );
    try {
      // 10 members of one channel and 10,000 messages there: (member, message) pairs for the reminders
      for (let i = 0; i < 10; i++)
        await call(server.baseUrl, 'PUT', `/v1/users/u${i}`, { name: `User ${i}` });

      const members = Array.from({ length: 10 }, (_, i) => `u${i}`);
      await call(server.baseUrl, 'POST', '/v1/channels', {
        type: 'group',
        external_id: 'team',
        created_by: 'u0',
        member_external_ids: members.slice(1),
      });
      const messages = Math.ceil(PENDING / 10);
      await pgQuery(
        pg.url('chat'),
        `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), c.workspace_id, c.id, u.id, u.id::text, 'text', 'message number ' || g,
                now() - make_interval(secs => ($1 - g) / 10.0)
           FROM channels c JOIN users u ON u.workspace_id = c.workspace_id AND u.external_id = 'u0',
                generate_series(1, $1) g
          WHERE c.external_id = 'team'`,
        [messages],
      );
      await pgQuery(
        pg.url('chat'),
        `CREATE TABLE bench_targets AS
           SELECT (row_number() OVER (ORDER BY m.id, cm.user_id))::int AS k, m.id AS message_id, cm.user_id
             FROM messages m JOIN channel_members cm ON cm.channel_id = m.channel_id`,
      );
      log(
        `scheduler idle cost: 0 vs ${PENDING} pending reminders, ${SECONDS} s windows, ${PAIRS} pairs; load ${loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}`,
      );
      const windows: Window[] = [];
      for (let i = 0; i < PAIRS; i++) {
        for (const pending of i % 2 ? [PENDING, 0] : [0, PENDING]) {
          const w = await window(pg, server.pid, pending);
          windows.push(w);
          const each = SOURCES.map(
            (s, k) =>
              `${s.name} ${w.msPerPass[k]!.toFixed(3)} ms, ${w.buffersPerPass[k]!.toFixed(1)} buffers`,
          ).join('; ');
          log(
            `  ${String(pending).padStart(7)} pending: ${w.passes} passes; per pass ${each}; PostgreSQL ${w.pgCpuMsPerSecond.toFixed(2)} ms CPU/s, service ${w.nodeCpuMsPerSecond.toFixed(2)} ms CPU/s; load ${w.load.toFixed(1)}`,
          );
        }
      }
      const at = (pending: number) => windows.filter((w) => w.pending === pending);
      const m = (pending: number, k: 'passes' | 'pgCpuMsPerSecond' | 'nodeCpuMsPerSecond') =>
        median(at(pending).map((w) => w[k]));
      const per = (pending: number, k: 'msPerPass' | 'buffersPerPass', digits: number) =>
        SOURCES.map((_, i) => median(at(pending).map((w) => w[k][i]!)).toFixed(digits)).join(' / ');
      const row = (pending: number) =>
        `| ${pending} | ${m(pending, 'passes').toFixed(0)} | ${per(pending, 'msPerPass', 3)} | ${per(pending, 'buffersPerPass', 1)} | ${m(pending, 'pgCpuMsPerSecond').toFixed(2)} | ${m(pending, 'nodeCpuMsPerSecond').toFixed(2)} |`;
      const names = SOURCES.map((s) => s.name).join(' / ');
      process.stdout.write(
        `\n| pending of each kind | passes per ${SECONDS} s | ms per pass (${names}) | buffers per pass (${names}) | PostgreSQL CPU ms/s | service CPU ms/s |\n|---:|---:|---:|---:|---:|---:|\n${row(0)}\n${row(PENDING)}\n`,
      );
    } finally {
      await server.stop();
    }
  } finally {
    await pg.stop();
    await cleanupAll();
  }
}

main().catch(async (e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  await cleanupAll();
  process.exit(1);
});
