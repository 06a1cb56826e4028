import { sign } from 'jsonwebtoken';
import { cpus, loadavg, totalmem } from 'os';
import { Client } from 'pg';
import type { EntityManager } from 'typeorm';
import { SearchQuery, SearchRepository } from '../src/search/search.repository';
import { API_KEY, API_SECRET, authHeader, freshStorage, startServer, writeSearchDocuments } from './lib';

/**
 * Search benchmark of issue 6, on a production build (`npm run build` first) and PostgreSQL:
 *
 *   npx ts-node --transpile-only bench/search.ts [--compare-trgm] [--explain]
 *
 * Seeds BENCH_SEARCH_MESSAGES (default 1M) messages over 1,000 channels of 20 members with one SQL
 * generate_series statement: words drawn from a 20,000-word vocabulary with a Zipf-like (log-uniform)
 * rank distribution, 4-16 words a message; every 20th message of each channel is Chinese (2-character words from a
 * 400-word vocabulary, no spaces). Then, through HTTP as a user in 50 channels who blocks 3 users, and
 * per channel and across channels: a rare word, two common words, a phrase of those two, a CJK word.
 * Also: the search documents of the seeded table written in one statement and indexed (what the search
 * indexer does after each send's commit, in bulk), the index's size, the indexer's batch statement per
 * message, the repository's SQL alone, and (`--compare-trgm`) the same queries through a pg_trgm index.
 */
const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
const CHANNELS = 1000;
const MEMBERS = 20;
const USERS = 2000;
const USER_CHANNELS = 50;
const ITERATIONS = Number(process.env.BENCH_SEARCH_ITERATIONS ?? 300);
const WARMUP = 20;
const args = new Set(process.argv.slice(2));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

/** The seed's word for vocabulary rank i: its base-100 digits as consonant-vowel syllables (1 → "be"). */
function word(i: number): string {
  const syl = (d: number) => 'bcdfghjklmnprstvwxyz'[Math.floor(d / 5)]! + 'aeiou'[d % 5]!;
  const out: string[] = [];
  for (let k = 2; k >= 0; k--) if (i >= 100 ** k) out.push(syl(Math.floor(i / 100 ** k) % 100));
  return out.join('');
}

const ids = {
  workspace: '',
  user: (i: number) => `00000000-0000-7000-8001-${i.toString(16).padStart(12, '0')}`,
  channel: (c: number) => `00000000-0000-7000-8002-${c.toString(16).padStart(12, '0')}`,
};
const BENCH_USER = USERS + 1;

function seedSql(workspaceId: string): string[] {
  const ws = `'${workspaceId}'::uuid`;
  const uid = (expr: string) => `('00000000-0000-7000-8001-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;
  const cid = (expr: string) => `('00000000-0000-7000-8002-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;
  return [
    `SELECT setseed(0.42)`,
    `INSERT INTO users (id, workspace_id, external_id, name)
     SELECT ${uid('i')}, ${ws}, 'u' || i, 'User ' || i FROM generate_series(1, ${USERS + 1}) i`,
    `INSERT INTO channels (id, workspace_id, type, external_id, name, created_at)
     SELECT ${cid('c')}, ${ws}, 'group', 'c' || c, 'Channel ' || c, '2025-01-01' FROM generate_series(0, ${CHANNELS - 1}) c`,
    // channel c: users 1 + (c*20 + k) % 2000 for k < 20; the bench user also in channels 0..49
    `INSERT INTO channel_members (channel_id, user_id, workspace_id, role, joined_at, last_read_at, last_delivered_at)
     SELECT ${cid('c')}, ${uid('u')}, ${ws}, 'member', '2025-01-01', '2025-01-01', '2025-01-01'
       FROM (SELECT c, 1 + ((c * ${MEMBERS} + k) % ${USERS}) AS u FROM generate_series(0, ${CHANNELS - 1}) c, generate_series(0, ${MEMBERS - 1}) k
             UNION SELECT c, ${BENCH_USER} FROM generate_series(0, ${USER_CHANNELS - 1}) c) x`,
    `INSERT INTO blocks (blocker_id, blocked_id, workspace_id) SELECT ${uid(String(BENCH_USER))}, ${uid('i')}, ${ws} FROM generate_series(1, 3) i`,
    `CREATE TEMP TABLE vocab AS
     SELECT i, string_agg(substr('bcdfghjklmnprstvwxyz', (d / 5) + 1, 1) || substr('aeiou', d % 5 + 1, 1), '' ORDER BY k DESC) AS w
       FROM generate_series(1, 20000) i,
            LATERAL (SELECT k, (i / (100 ^ k)::int) % 100 AS d FROM generate_series(0, 2) k WHERE i >= (100 ^ k)::int) x
      GROUP BY i`,
    `CREATE TEMP TABLE cvocab AS
     SELECT i, CASE WHEN i = 20 THEN '会议' ELSE substr(s, 1 + (i % 60), 1) || substr(s, 1 + ((i * 7 + 3) % 60), 1) END AS w
       FROM generate_series(1, 400) i,
            (SELECT '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社' AS s) q`,
    `CREATE TEMP TABLE picks AS
     SELECT n, j, CASE WHEN (n / ${CHANNELS}) % 20 = 0 THEN floor(exp(random() * ln(400)))::int ELSE floor(exp(random() * ln(20000)))::int END AS r
       FROM generate_series(1, ${MESSAGES}) n, generate_series(1, 4 + ((n::bigint * 7919) % 13)::int) j`,
    `CREATE TEMP TABLE contents AS
     SELECT p.n, CASE WHEN (p.n / ${CHANNELS}) % 20 = 0 THEN string_agg(c.w, '' ORDER BY p.j) ELSE string_agg(v.w, ' ' ORDER BY p.j) END AS content
       FROM picks p LEFT JOIN vocab v ON (p.n / ${CHANNELS}) % 20 <> 0 AND v.i = p.r LEFT JOIN cvocab c ON (p.n / ${CHANNELS}) % 20 = 0 AND c.i = p.r
      GROUP BY p.n`,
    // one message every 30 s, channels interleaved, authors among the channel's members
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
     SELECT (lpad(to_hex((extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7' || lpad(to_hex(n % 4096), 3, '0') || '8' || lpad(to_hex(n), 15, '0'))::uuid,
            ${ws}, ${cid(`n % ${CHANNELS}`)}, u.id, u.id::text, 'text', c.content, ts
       FROM contents c
       CROSS JOIN LATERAL (SELECT timestamptz '2025-01-01' + n * interval '30 seconds' AS ts) t
       CROSS JOIN LATERAL (SELECT ${uid(`1 + ((n % ${CHANNELS}) * ${MEMBERS} + (n / ${CHANNELS}) % ${MEMBERS}) % ${USERS}`)} AS id) u
      ORDER BY n`,
  ];
}

interface Case {
  name: string;
  q: string;
}

const CASES: Case[] = [
  { name: 'rare word', q: word(10000) },
  { name: 'two common words', q: `${word(5)} ${word(10)}` },
  { name: 'phrase', q: `"${word(5)} ${word(10)}"` },
  { name: 'CJK (2 characters)', q: '会议' },
];

interface Row {
  scope: string;
  name: string;
  q: string;
  hits: number;
  p50: number;
  p99: number;
  sqlP50?: number;
  sqlP99?: number;
}

async function main(): Promise<void> {
  const cpu = cpus();
  log(
    `machine: ${cpu.length} x ${cpu[0]?.model ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`,
  );
  const loadAtStart = loadavg();
  const storage = await freshStorage('postgres');
  const pg = new Client({ connectionString: storage.env.DATABASE_URL });
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(storage, { SERVICE_ROLE: 'api', LOG_LEVEL: 'warn' });
    const base = server.baseUrl;
    const me = (await (
      await fetch(`${base}/v1/workspace`, { headers: { Authorization: authHeader } })
    ).json()) as { id: string };
    ids.workspace = me.id;
    await pg.connect();
    const pgVersion = ((await pg.query('SHOW server_version')).rows[0] as { server_version: string })
      .server_version;
    log(`PostgreSQL ${pgVersion}, workspace ${me.id}`);

    let t0 = performance.now();
    for (const sql of seedSql(me.id)) await pg.query(sql);
    const seedS = (performance.now() - t0) / 1000;
    log(`seeded ${MESSAGES} messages in ${seedS.toFixed(0)} s`);
    // the messages' search documents, as the search indexer writes them after each send's commit (the
    // seed wrote no message.created event for it to follow): in one statement, the GIN index built after
    await pg.query(`SET maintenance_work_mem = '256MB'`);
    t0 = performance.now();
    await writeSearchDocuments(pg);
    const backfillS = (performance.now() - t0) / 1000;
    await pg.query('VACUUM ANALYZE messages, message_search');
    const sizes = (
      await pg.query(
        `SELECT pg_size_pretty(pg_relation_size('messages')) AS heap, pg_size_pretty(pg_relation_size('message_search_doc')) AS gin,
                (SELECT avg(pg_column_size(doc))::int FROM (SELECT doc FROM message_search TABLESAMPLE SYSTEM (1)) s) AS doc_bytes`,
      )
    ).rows[0] as { heap: string; gin: string; doc_bytes: number };
    log(
      `documents written and indexed in ${backfillS.toFixed(0)} s; heap ${sizes.heap}, index ${sizes.gin}, document ~${sizes.doc_bytes} B`,
    );

    const writes = await indexerCost(pg);
    log(`indexer cost: ${JSON.stringify(writes)}`);

    const userToken = `Bearer ${sign({ sub: `u${BENCH_USER}`, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 7200 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY })}`;
    const channel = ids.channel(7);
    const rows: Row[] = [];
    for (const scope of ['per-channel', 'cross-channel'] as const) {
      for (const c of CASES) {
        const path =
          scope === 'per-channel' ? `/v1/channels/${channel}/messages/search` : '/v1/search/messages';
        const url = `${base}${path}?q=${encodeURIComponent(c.q)}`;
        let hits = 0;
        const lat: number[] = [];
        for (let i = 0; i < WARMUP + ITERATIONS; i++) {
          const s = performance.now();
          const res = await fetch(url, { headers: { Authorization: userToken } });
          const body = (await res.json()) as { messages: unknown[] };
          if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
          if (i >= WARMUP) lat.push(performance.now() - s);
          hits = body.messages.length;
        }
        const total = await countMatches(pg, scope, c.q, channel);
        rows.push({ scope, name: c.name, q: c.q, hits: total ?? hits, p50: pct(lat, 50), p99: pct(lat, 99) });
        log(
          `${scope} ${c.name} (${c.q}): ${total} matches, p50 ${ms(pct(lat, 50))} ms, p99 ${ms(pct(lat, 99))} ms`,
        );
      }
    }
    await sqlOnly(pg, rows, channel);

    const load = `load average ${loadAtStart.map((x) => x.toFixed(1)).join(' / ')} at the start, ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')} after the queries`;
    process.stdout.write(`\n${report(pgVersion, seedS, backfillS, sizes, writes, rows)}\n${load}\n`);
    if (args.has('--explain')) process.stdout.write(`\n${await explainAll(pg, channel)}\n`);
    if (args.has('--compare-trgm')) process.stdout.write(`\n${await compareTrgm(pg, channel)}\n`);
  } finally {
    await pg.end().catch(() => undefined);
    if (server) await server.stop();
    if (!args.has('--keep')) await storage.drop();
    else log(`kept database: ${storage.env.DATABASE_URL}`);
  }
}

/** How many messages a query matches in a scope (what ranking has to sort), through the same tsquery. */
async function countMatches(pg: Client, scope: string, q: string, channel: string): Promise<number> {
  const tsq = await tsqueryOf(pg, q);
  const where =
    scope === 'per-channel'
      ? `channel_id = $3`
      : `channel_id IN (SELECT channel_id FROM channel_members WHERE user_id = $3)`;
  const r = await pg.query(
    `SELECT count(*)::int AS n FROM message_search s JOIN messages m ON m.id = s.message_id
      WHERE m.workspace_id = $1 AND s.doc @@ $2::tsquery AND m.${where}`,
    [ids.workspace, tsq, scope === 'per-channel' ? channel : ids.user(BENCH_USER)],
  );
  return (r.rows[0] as { n: number }).n;
}

/** The tsquery the service builds for these benchmark queries (plain words, one phrase). */
async function tsqueryOf(pg: Client, q: string): Promise<string> {
  const phrase = q.startsWith('"');
  const words = q.replace(/"/g, '').split(' ');
  const lex = await Promise.all(
    words.map(
      async (w) =>
        (
          (
            await pg.query(
              `SELECT array_agg(lexeme ORDER BY pos) AS l FROM search_tokens($1) WHERE kind <> 'u'`,
              [w],
            )
          ).rows[0] as { l: string[] }
        ).l,
    ),
  );
  const terms = lex.map((l) => l.map((x) => `'${x}'`).join(' <-> '));
  return terms.join(phrase ? ' <-> ' : ' & ');
}

function queryFor(scope: string, tsquery: string, channel: string): SearchQuery {
  return {
    workspaceId: ids.workspace,
    scope:
      scope === 'per-channel'
        ? { kind: 'channel', channelId: channel }
        : { kind: 'channels', channelIds: Array.from({ length: USER_CHANNELS }, (_, c) => ids.channel(c)) },
    tsquery,
    filters: {},
    hiddenUserIds: [1, 2, 3].map(ids.user),
    take: 51,
    exact: [],
    prefixes: [],
  };
}

/** The repository's search statement alone (no HTTP, no rendering), timed from a client. */
async function sqlOnly(pg: Client, rows: Row[], channel: string): Promise<void> {
  const repo = new SearchRepository();
  const m = {
    query: async (sql: string, params: unknown[]) => (await pg.query(sql, params)).rows,
  } as unknown as EntityManager;
  for (const r of rows) {
    const q = queryFor(r.scope, await tsqueryOf(pg, r.q), channel);
    const lat: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const s = performance.now();
      await repo.page(m, q);
      if (i >= WARMUP) lat.push(performance.now() - s);
    }
    r.sqlP50 = pct(lat, 50);
    r.sqlP99 = pct(lat, 99);
  }
}

/**
 * What the search indexer's work costs a message: its batch statement (the documents of up to 500 new
 * messages into message_search, their GIN entries included), timed over 10 batches of 500 messages
 * written just before; plus search_document() alone over one channel.
 */
async function indexerCost(
  pg: Client,
): Promise<{ batchP50: number; batchP99: number; perMessageUs: number; documentUs: number }> {
  const batches: number[] = [];
  for (let b = 0; b < 10; b++) {
    const written = (
      await pg.query(
        `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), $1, $2, $3::uuid, $3::text, 'text',
                'bench write number ' || g || ' with a few more words to index, like a chat message would', now()
           FROM generate_series(1, 500) g
         RETURNING id`,
        [ids.workspace, ids.channel(999), ids.user(1)],
      )
    ).rows.map((r: { id: string }) => r.id);
    const s = performance.now();
    await pg.query(
      `INSERT INTO message_search (message_id, channel_id, doc)
       SELECT id, channel_id, chat_search_doc(content, channel_id) FROM messages WHERE id = ANY($1::uuid[])`,
      [written],
    );
    batches.push(performance.now() - s);
  }
  await pg.query(
    `DELETE FROM message_search WHERE message_id IN (SELECT id FROM messages WHERE channel_id = $1 AND content LIKE 'bench write number %')`,
    [ids.channel(999)],
  );
  await pg.query(`DELETE FROM messages WHERE channel_id = $1 AND content LIKE 'bench write number %'`, [
    ids.channel(999),
  ]);
  const t = (
    await pg.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) SELECT search_document(content) FROM messages WHERE channel_id = $1`,
      [ids.channel(3)],
    )
  ).rows[0] as {
    'QUERY PLAN': [{ 'Execution Time': number; Plan: { 'Actual Rows': number } }];
  };
  const plan = t['QUERY PLAN'][0];
  return {
    batchP50: pct(batches, 50),
    batchP99: pct(batches, 99),
    perMessageUs: (pct(batches, 50) * 1000) / 500,
    documentUs: (plan['Execution Time'] * 1000) / plan.Plan['Actual Rows'],
  };
}

async function explainAll(pg: Client, channel: string): Promise<string> {
  const repo = new SearchRepository();
  const out: string[] = ['## EXPLAIN (ANALYZE, BUFFERS)'];
  for (const scope of ['per-channel', 'cross-channel']) {
    for (const c of CASES) {
      const tsq = await tsqueryOf(pg, c.q);
      const m = {
        query: async (sql: string, params: unknown[]) => {
          const r = await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
          out.push(
            `### ${scope}, ${c.name}: ${c.q}\n\n\`\`\`\n${(r.rows as { 'QUERY PLAN': string }[]).map((x) => x['QUERY PLAN']).join('\n')}\n\`\`\``,
          );
          return [];
        },
      } as unknown as EntityManager;
      await repo.page(m, queryFor(scope, tsq, channel));
    }
  }
  return out.join('\n\n');
}

/**
 * The alternative: pg_trgm on lower(content), words matched with a regular expression between word
 * boundaries (what "no stemming, whole words" needs), CJK with LIKE. Same scopes, newest first (no
 * relevance: pg_trgm has none that fits), 10 runs each.
 */
async function compareTrgm(pg: Client, channel: string): Promise<string> {
  await pg.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await pg.query(`SET maintenance_work_mem = '256MB'`);
  let t0 = performance.now();
  await pg.query('CREATE INDEX bench_trgm ON messages USING gin (lower(content) gin_trgm_ops)');
  const buildS = (performance.now() - t0) / 1000;
  await pg.query('ANALYZE messages');
  const size = (
    (await pg.query(`SELECT pg_size_pretty(pg_relation_size('bench_trgm')) AS s`)).rows[0] as { s: string }
  ).s;
  const w = (x: string) => `lower(content) ~ '\\m${x}\\M'`;
  const preds: [string, string][] = [
    ['rare word', w(word(10000))],
    ['two common words', `${w(word(5))} AND ${w(word(10))}`],
    ['phrase', `lower(content) ~ '\\m${word(5)}[^[:alnum:]]+${word(10)}\\M'`],
    ['CJK (2 characters)', `content LIKE '%会议%'`],
  ];
  const lines = [
    `## pg_trgm comparison: index build ${buildS.toFixed(0)} s, size ${size}`,
    '',
    '| scope | query | p50 ms | p99 ms | plan |',
    '|---|---|---|---|---|',
  ];
  const channels = Array.from({ length: USER_CHANNELS }, (_, c) => ids.channel(c));
  for (const scope of ['per-channel', 'cross-channel']) {
    for (const [name, pred] of preds) {
      const sql = `SELECT id FROM messages WHERE workspace_id = $1 AND deleted_at IS NULL AND ${pred} AND ${
        scope === 'per-channel' ? 'channel_id = $2' : 'channel_id = ANY($2::uuid[])'
      } ORDER BY created_at DESC, id DESC LIMIT 51`;
      const params = [ids.workspace, scope === 'per-channel' ? channel : channels];
      const plan = (await pg.query(`EXPLAIN ${sql}`, params)).rows
        .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
        .join(' ');
      const uses = plan.includes('bench_trgm')
        ? 'trgm index'
        : plan.includes('messages_channel_time')
          ? 'channel index + filter'
          : 'other';
      const lat: number[] = [];
      for (let i = 0; i < 11; i++) {
        t0 = performance.now();
        await pg.query(sql, params);
        if (i) lat.push(performance.now() - t0);
      }
      lines.push(`| ${scope} | ${name} | ${ms(pct(lat, 50))} | ${ms(pct(lat, 99))} | ${uses} |`);
      log(`trgm ${scope} ${name}: p50 ${ms(pct(lat, 50))} ms (${uses})`);
    }
  }
  t0 = performance.now();
  await pg.query(`SELECT count(*) FROM messages WHERE lower(content) ~ '\\m${word(10000)}\\M'`);
  lines.push('', `(whole workspace, rare word through pg_trgm: ${ms(performance.now() - t0)} ms)`);
  await pg.query('DROP INDEX bench_trgm');
  return lines.join('\n');
}

function report(
  pgVersion: string,
  seedS: number,
  backfillS: number,
  sizes: { heap: string; gin: string; doc_bytes: number },
  writes: { batchP50: number; batchP99: number; perMessageUs: number; documentUs: number },
  rows: Row[],
): string {
  const cpu = cpus();
  const lines = [
    `${MESSAGES.toLocaleString('en')} messages over ${CHANNELS} channels (${MEMBERS} members each), one workspace; PostgreSQL ${pgVersion};`,
    `${cpu.length} x ${cpu[0]?.model ?? '?'}; the searching user is in ${USER_CHANNELS} channels and blocks 3 users. ${ITERATIONS} sequential requests`,
    `per row after ${WARMUP} warm-up requests, default page size (50). "HTTP" is the whole request through the service (auth,`,
    `membership, tokenizing the query, the search, rendering 50 messages with highlights); "SQL" is the ranked search statement alone.`,
    '',
    '| scope | query | matches | HTTP p50 ms | HTTP p99 ms | SQL p50 ms | SQL p99 ms |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.scope} | ${r.name}: \`${r.q}\` | ${r.hits} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.sqlP50 ?? NaN)} | ${ms(r.sqlP99 ?? NaN)} |`,
    ),
    '',
    `Seeding ${seedS.toFixed(0)} s. The seeded messages' search documents written in one statement and their GIN index built: ${backfillS.toFixed(0)} s;`,
    `heap ${sizes.heap}, message_search_doc index ${sizes.gin}, a document ~${sizes.doc_bytes} bytes.`,
    `The search indexer's batch statement (500 new messages' documents into message_search, GIN entries included; 10 batches): p50 ${ms(writes.batchP50)} ms,`,
    `p99 ${ms(writes.batchP99)} ms, ${writes.perMessageUs.toFixed(0)} µs a message, off the send's commit path; search_document() alone ${writes.documentUs.toFixed(0)} µs a message.`,
  ];
  return lines.join('\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
