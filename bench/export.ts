import { execSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import Redis from 'ioredis';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import {
  authHeader,
  BENCH_REDIS_URL,
  freshStorage,
  loadAverage,
  machine,
  Server,
  startServer,
  writeBenchmarkSection,
} from './lib';

/**
 * User export benchmark (CONTRACT §20), on a production build (`npm run build` first), PostgreSQL and
 * Redis:
 *
 *   npm run bench:export [-- --messages=1000000] [-- --no-write]
 *
 * In a database of its own (created on 127.0.0.1:5432, dropped at the end): one user with
 * BENCH_EXPORT_MESSAGES (default 1,000,000) messages over 10 channels, inserted with generate_series;
 * every 10th of them has a reaction of another user, and the user reacted to 10,000 messages of that
 * other user. Then, through the real code path in separate processes: an `api` process takes
 * `POST /v1/users/ana/exports`, a `worker` process (BullMQ on Redis) builds it into the local storage
 * driver. Reports the build time, the document's size and the worker's peak RSS (VmHWM of
 * /proc/<pid>/status, before and after the export), and checks the document holds every message.
 */
const args = process.argv.slice(2);
const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const MESSAGES = Number(arg('messages') ?? process.env.BENCH_EXPORT_MESSAGES ?? 1_000_000);
const CHANNELS = 10;
const OTHER_MESSAGES = 10_000;
const BATCH = 100_000;
const READY_TIMEOUT_MS = 60 * 60_000;

const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const mb = (kb: number) => (kb / 1024).toFixed(1);

/** A field of /proc/<pid>/status in kB (VmHWM: peak resident set; VmRSS: now). */
function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]);
}

async function api<T>(
  server: Server,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { Authorization: authHeader, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as T };
}

/** Streams the document: bytes, and how often a key that only messages carry occurs. */
async function scan(url: string): Promise<{ bytes: number; messages: number; head: string; tail: string }> {
  const res = await fetch(url);
  if (res.status !== 200 || !res.body) throw new Error(`download answered ${res.status}`);
  const needle = '"show_in_channel"';
  let bytes = 0;
  let messages = 0;
  let carry = '';
  let head = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    const text = carry + decoder.decode(chunk, { stream: true });
    if (head.length < 200) head += text.slice(0, 200 - head.length);
    for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) messages++;
    carry = text.slice(-(needle.length - 1));
  }
  return { bytes, messages, head, tail: carry };
}

async function seed(
  db: Client,
  workspaceId: string,
  ana: string,
  bo: string,
  channels: string[],
): Promise<number> {
  const started = Date.now();
  // The full-text index is not what an export reads; without it the seed takes a fraction of the time.
  await db.query(`DROP INDEX IF EXISTS messages_search`);
  const chans = `ARRAY[${channels.map((c) => `'${c}'::uuid`).join(',')}]`;
  const insert = (user: string, from: number, to: number, text: string) =>
    db.query(
      `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
       SELECT gen_random_uuid(), $1, (${chans})[1 + i % ${CHANNELS}], $2, $5, 'text',
              ${text}, timestamptz '2025-01-01' + i * interval '10 ms'
         FROM generate_series($3::int, $4::int) AS i`,
      [workspaceId, user, from, to, user],
    );
  for (let from = 1; from <= MESSAGES; from += BATCH) {
    const to = Math.min(MESSAGES, from + BATCH - 1);
    await insert(ana, from, to, `'message ' || i || ' of ana, ' || md5(i::text)`);
    log(`seeded ${to.toLocaleString('en')} of ${MESSAGES.toLocaleString('en')} messages`);
  }
  await insert(bo, MESSAGES + 1, MESSAGES + OTHER_MESSAGES, `'bo says ' || md5(i::text)`);
  // bo reacts to every 10th message of ana; ana to every message of bo
  await db.query(
    `INSERT INTO reactions (message_id, user_id, channel_id, emoji, created_at)
     SELECT m.id, $2, m.channel_id, '🎉', m.created_at + interval '1 second'
       FROM messages m WHERE m.workspace_id = $1 AND m.user_id = $3 AND (hashtext(m.id::text) % 10) = 0`,
    [workspaceId, bo, ana],
  );
  await db.query(
    `INSERT INTO reactions (message_id, user_id, channel_id, emoji, created_at)
     SELECT m.id, $2, m.channel_id, '👍', m.created_at + interval '1 second'
       FROM messages m WHERE m.workspace_id = $1 AND m.user_id = $3`,
    [workspaceId, ana, bo],
  );
  await db.query(`ANALYZE messages; ANALYZE reactions; ANALYZE channel_members`);
  return Date.now() - started;
}

async function main(): Promise<void> {
  const loadStart = loadAverage();
  const loadavgStart = readFileSync('/proc/loadavg', 'utf8').trim();
  const storage = await freshStorage('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'chat-export-bench-'));
  const env = { SERVICE_DATA_DIR: dir, SERVICE_STORAGE_DRIVER: 'local', LOG_LEVEL: 'warn' };
  const servers: Server[] = [];
  const db = new Client({ connectionString: storage.env.DATABASE_URL });
  try {
    log(`database ${new URL(storage.env.DATABASE_URL!).pathname.slice(1)}; starting the api process`);
    const apiServer = await startServer(storage, { ...env, SERVICE_ROLE: 'api' });
    servers.push(apiServer);
    const users: Record<string, string> = {};
    for (const u of ['ana', 'bo']) {
      const r = await api<{ id: string }>(apiServer, 'PUT', `/v1/users/${u}`, { name: u });
      if (r.status !== 201) throw new Error(`PUT /v1/users/${u} answered ${r.status}`);
      users[u] = r.body.id;
    }
    const channels: string[] = [];
    for (let c = 0; c < CHANNELS; c++) {
      const r = await api<{ id: string }>(apiServer, 'POST', '/v1/channels', {
        type: 'group',
        external_id: `bench-${c}`,
        name: `Bench ${c}`,
        created_by: 'ana',
        member_external_ids: ['bo'],
      });
      if (r.status !== 201) throw new Error(`POST /v1/channels answered ${r.status}`);
      channels.push(r.body.id);
    }
    await db.connect();
    const [{ workspace_id: workspaceId }] = (
      await db.query<{ workspace_id: string }>(`SELECT workspace_id FROM users WHERE id = $1`, [users.ana])
    ).rows as [{ workspace_id: string }];
    const seedMs = await seed(db, workspaceId, users.ana!, users.bo!, channels);
    const counts = (
      await db.query<{ messages: string; reactions_on: string; reactions_by: string; table_mb: string }>(
        `SELECT (SELECT count(*) FROM messages WHERE user_id = $1) AS messages,
                (SELECT count(*) FROM reactions r JOIN messages m ON m.id = r.message_id WHERE m.user_id = $1) AS reactions_on,
                (SELECT count(*) FROM reactions WHERE user_id = $1) AS reactions_by,
                round(pg_total_relation_size('messages') / 1048576.0) AS table_mb`,
        [users.ana],
      )
    ).rows[0]!;
    log(`seeded in ${(seedMs / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`);

    log('starting the worker process');
    const worker = await startServer(storage, { ...env, SERVICE_ROLE: 'worker' });
    servers.push(worker);
    await new Promise((r) => setTimeout(r, 2_000)); // let start-up settle
    const hwmBefore = procStatus(worker.pid, 'VmHWM');
    const rssBefore = procStatus(worker.pid, 'VmRSS');
    log(`worker pid ${worker.pid}: VmRSS ${mb(rssBefore)} MB, VmHWM ${mb(hwmBefore)} MB before the export`);

    const started = Date.now();
    const req = await api<{ id: string; status: string }>(apiServer, 'POST', '/v1/users/ana/exports');
    if (req.status !== 202) throw new Error(`POST exports answered ${req.status}`);
    let view: { status: string; download_url?: string } = { status: 'pending' };
    let rssMax = rssBefore;
    let lastLog = Date.now();
    while (view.status === 'pending') {
      if (Date.now() - started > READY_TIMEOUT_MS) throw new Error('the export did not finish in time');
      await new Promise((r) => setTimeout(r, 250));
      rssMax = Math.max(rssMax, procStatus(worker.pid, 'VmRSS'));
      view = (await api<typeof view>(apiServer, 'GET', `/v1/exports/${req.body.id}`)).body;
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        log(
          `… ${((Date.now() - started) / 1000).toFixed(0)} s, worker VmRSS ${mb(procStatus(worker.pid, 'VmRSS'))} MB`,
        );
      }
    }
    const buildMs = Date.now() - started;
    const hwmAfter = procStatus(worker.pid, 'VmHWM');
    const loadEnd = loadAverage();
    const loadavgEnd = readFileSync('/proc/loadavg', 'utf8').trim();
    if (view.status !== 'ready' || !view.download_url) throw new Error(`the export ended ${view.status}`);
    log(
      `ready after ${(buildMs / 1000).toFixed(1)} s; worker VmHWM ${mb(hwmAfter)} MB; checking the document`,
    );
    const doc = await scan(view.download_url);
    const complete =
      doc.messages === MESSAGES &&
      doc.head.startsWith('{"format":"chat-service/user-export"') &&
      doc.tail.endsWith(']}');
    log(
      `document: ${(doc.bytes / 1048576).toFixed(1)} MiB, ${doc.messages.toLocaleString('en')} messages${complete ? '' : ' (INCOMPLETE)'}`,
    );
    if (!complete) throw new Error(`the document holds ${doc.messages} messages of ${MESSAGES}, or is cut`);

    const rows = [
      ['messages of the user (10 channels)', Number(counts.messages).toLocaleString('en')],
      [
        'reactions on them / by the user',
        `${Number(counts.reactions_on).toLocaleString('en')} / ${Number(counts.reactions_by).toLocaleString('en')}`,
      ],
      ['messages table (with indexes, no search index)', `${counts.table_mb} MB`],
      ['seeding (generate_series, in batches of 100,000)', `${(seedMs / 1000).toFixed(1)} s`],
      [
        'export: POST → GET says ready',
        `${(buildMs / 1000).toFixed(1)} s (${Math.round(MESSAGES / (buildMs / 1000)).toLocaleString('en')} messages/s)`,
      ],
      [
        'document',
        `${(doc.bytes / 1048576).toFixed(1)} MiB, ${doc.messages.toLocaleString('en')} messages (checked)`,
      ],
      ['worker VmRSS / VmHWM before the export', `${mb(rssBefore)} MB / ${mb(hwmBefore)} MB`],
      ['worker VmHWM after the export (peak RSS)', `**${mb(hwmAfter)} MB** (target: under 200 MB)`],
      ['worker VmRSS, highest 250 ms sample', `${mb(rssMax)} MB`],
      ['/proc/loadavg at the start / at the end', `${loadavgStart} / ${loadavgEnd}`],
    ];
    const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    const body = [
      `\`npm run bench:export\` (bench/export.ts, commit ${commit}): ${machine()}; PostgreSQL and Redis on the same`,
      `machine; load average ${loadStart} at the start, ${loadEnd} at the end (2 shared cores, other work running).`,
      '',
      'One user with a million messages, seeded with `generate_series` in a database of its own. An `api` process',
      'takes `POST /v1/users/ana/exports`; a separate `worker` process (`SERVICE_ROLE=worker`, BullMQ on Redis)',
      'builds the document with the real job: each section in keyset pages of 1,000 rows rendered as JSON by',
      'PostgreSQL, streamed into the local storage driver. The document is then downloaded from its',
      '`download_url` and its messages counted. Peak RSS is `VmHWM` of the worker in `/proc/<pid>/status`.',
      '',
      '| | |',
      '|---|---|',
      ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    ].join('\n');
    process.stdout.write(`${body}\n`);
    if (!args.includes('--no-write')) log(`wrote ${writeBenchmarkSection('Data rights: export', body)}`);
  } finally {
    for (const s of servers.reverse()) await s.stop().catch(() => undefined);
    await db.end().catch(() => undefined);
    await storage.drop().catch((e: unknown) => log(`dropping the database: ${String(e)}`));
    rmSync(dir, { recursive: true, force: true });
    const redis = new Redis(BENCH_REDIS_URL);
    try {
      const prefix = storage.env.SERVICE_REDIS_PREFIX!;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
