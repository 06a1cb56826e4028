import { randomBytes } from 'crypto';
import { Client as PgClient } from 'pg';
import { DataSource } from 'typeorm';
import { EventLogReader } from '../../src/events/event-log.reader';
import { composePass, LogTail, LogTailPart } from '../../src/events/log-tail';
import { SavedCursor } from '../../src/events/saved-cursor';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { FakeFcm } from '../push/fcm';

// Integration only (real PostgreSQL): issue 24. Whatever the size of the log, each probe the log
// followers make of `events` is an index range scan of (tx_id, position) (or of the primary key), so an
// idle pass costs the same at 35k rows as at 1M. Checked on the statements the code composes, as a
// custom plan and as the generic plan a named prepared statement keeps.

/** Old rows, below every follower's cursor (FOLLOWER_PLAN_ROWS to try another size). */
const OLD_ROWS = Number(process.env.FOLLOWER_PLAN_ROWS ?? 1_000_000);
const FILLER_WORKSPACE = '00000000-0000-4000-8000-00000000f124';
const FILLER_CHANNEL = '00000000-0000-4000-8000-00000000f125';
const OLD_MESSAGES = Math.min(OLD_ROWS, 200_000);
/** The parts a process running every role registers (push: with a service account). */
const EXPECTED_PARTS = ['push', 'realtime', 'search', 'webhooks'];
/** An idle probe reads a handful of index entries (a few pages); a walk of the old rows reads hundreds of thousands (thousands of pages). */
const ROWS_BUDGET = 100;
const PAGES_BUDGET = 100;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

interface Explained {
  Plan: PlanNode;
  'Execution Time': number;
}

/** What is wrong with the plan's reads of `events` (empty: every read is an index range probe). */
function offences(plan: PlanNode): string[] {
  const out: string[] = [];
  const visit = (n: PlanNode, parent: PlanNode | null) => {
    // a part's lookups of messages go by key: a generic plan made on a small table must not scan it
    if (['messages', 'message_search'].includes(n['Relation Name'] ?? '') && n['Node Type'] === 'Seq Scan')
      out.push(`Seq Scan on ${n['Relation Name']}: a walk of the table`);
    const onEvents =
      n['Relation Name'] === 'events' ||
      (n['Node Type'] === 'Bitmap Index Scan' && parent?.['Relation Name'] === 'events');
    if (onEvents) {
      const what = `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''} (${n['Index Cond'] ?? 'no index condition'})`;
      const loops = n['Actual Loops'] ?? 1;
      const touched =
        (n['Actual Rows'] ?? 0) * loops +
        (n['Rows Removed by Filter'] ?? 0) +
        (n['Rows Removed by Index Recheck'] ?? 0);
      if (n['Node Type'] === 'Bitmap Heap Scan') {
        // judged by its Bitmap Index Scan child
      } else if (!['Index Scan', 'Index Only Scan', 'Bitmap Index Scan'].includes(n['Node Type'])) {
        out.push(`${what}: not an index scan`);
      } else if (!['events_tx_order', 'events_pkey'].includes(n['Index Name'] ?? '')) {
        // (workspace_id, tx_id, position) without a workspace, or (created_at): a walk of the index
        out.push(`${what}: not the (tx_id, position) index nor the primary key`);
      } else if (!/\b(tx_id|position)\b/.test(n['Index Cond'] ?? '')) {
        out.push(`${what}: no index condition on tx_id/position`);
      }
      const pages = (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);
      if (touched > ROWS_BUDGET) out.push(`${what}: ${touched} rows read`);
      if (pages > PAGES_BUDGET) out.push(`${what}: ${pages} pages read`);
    }
    for (const c of n.Plans ?? []) visit(c, n);
  };
  visit(plan, null);
  return out;
}

/** A pass's parameters are cursors: text (xid8) and numbers. */
const literal = (v: unknown) =>
  v === null ? 'NULL' : `'${(typeof v === 'number' ? String(v) : (v as string)).replace(/'/g, "''")}'`;

/**
 * EXPLAIN ANALYZE of `text` twice, in a transaction rolled back (a pass writes: cursors, deliveries):
 * with its parameters bound (planned for them), and as a prepared statement forced to its generic plan
 * (what the log tail's named statement runs after its first executions).
 */
async function explain(
  c: PgClient,
  text: string,
  params: unknown[],
): Promise<{ custom: Explained; generic: Explained }> {
  await c.query('BEGIN');
  try {
    const custom = (
      await c.query<{ 'QUERY PLAN': Explained[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)
    ).rows[0]!['QUERY PLAN'][0]!;
    await c.query(`PREPARE follower_probe AS ${text}`);
    await c.query('SET LOCAL plan_cache_mode = force_generic_plan');
    const args = params.length ? `(${params.map(literal).join(', ')})` : '';
    const generic = (
      await c.query<{ 'QUERY PLAN': Explained[] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE follower_probe${args}`,
      )
    ).rows[0]!['QUERY PLAN'][0]!;
    return { custom, generic };
  } finally {
    await c.query('ROLLBACK');
    await c.query('DEALLOCATE ALL');
  }
}

/**
 * The old log: OLD_ROWS rows of another workspace in one statement, in transactions of about 1,000 rows
 * below the current ids, written over the last 25 days, in the heap in no particular order (as after
 * retention freed pages that later writes reused): the planner then sees no correlation between
 * tx_id and the rows' places, as on a table that has lived a while. The indexes that back no
 * constraint are dropped for the fill and built again from their own definitions (much faster than
 * a million random inserts into them); the foreign key to the filler workspace is not checked per row.
 */
async function fillOldLog(c: PgClient): Promise<void> {
  await c.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'filler')`, [FILLER_WORKSPACE]);
  const [{ xmin }] = (
    await c.query<{ xmin: string }>(`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`)
  ).rows as [{ xmin: string }];
  // as many distinct transaction ids below the current ones as the cluster has used (at most one per 1,000 rows)
  const span = Math.max(1, Math.min(Number(xmin) - 4, Math.ceil(OLD_ROWS / 1000)));
  await c.query('BEGIN');
  await c.query('SET LOCAL session_replication_role = replica');
  const { rows: plain } = await c.query<{ name: string; def: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
      WHERE i.indrelid = 'events'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
  );
  expect(plain.map((i) => i.name)).toEqual(
    expect.arrayContaining(['events_tx_order', 'events_workspace_order']),
  );
  for (const i of plain) await c.query(`DROP INDEX ${i.name}`);
  const [{ pos0 }] = (
    await c.query<{ pos0: string }>(`SELECT COALESCE(max(position), 0)::text AS pos0 FROM events`)
  ).rows as [{ pos0: string }];
  await c.query(
    `INSERT INTO events (position, id, workspace_id, type, payload, tx_id, created_at)
     SELECT $5::bigint + g, gen_random_uuid(), $1, CASE WHEN g % 8 = 0 THEN 'user.created' ELSE 'message.created' END,
            jsonb_build_object('message', jsonb_build_object('id', gen_random_uuid(), 'content', 'old')),
            ($2::bigint - $3::bigint + (g - 1) * $3::bigint / $4::bigint)::text::xid8,
            now() - make_interval(secs => 25 * 86400 * (1 - g::float8 / $4::bigint))
       FROM (SELECT g FROM generate_series(1, $4::bigint) g ORDER BY random()) s`,
    [FILLER_WORKSPACE, xmin, span, OLD_ROWS, pos0],
  );
  for (const i of plain) await c.query(i.def);
  // old messages too (their events are among the old rows above): the parts look messages up by key
  await c.query(
    `INSERT INTO channels (id, workspace_id, type, external_id) VALUES ($2, $1, 'group', 'filler')`,
    [FILLER_WORKSPACE, FILLER_CHANNEL],
  );
  await c.query(
    `INSERT INTO messages (id, workspace_id, channel_id, sender_key, type, content, created_at)
     SELECT gen_random_uuid(), $1, $2, 'filler', 'text', 'old message ' || g, now() - make_interval(secs => g)
       FROM generate_series(1, $3::int) g`,
    [FILLER_WORKSPACE, FILLER_CHANNEL, OLD_MESSAGES],
  );
  await c.query('COMMIT');
  await c.query(
    `SELECT setval(pg_get_serial_sequence('events', 'position'), (SELECT max(position) FROM events))`,
  );
  // every follower followed the whole log: its cursor at the end of it
  await c.query(
    `UPDATE event_relay_cursors SET (tx_id, position) = (SELECT e.tx_id, e.position FROM events e ORDER BY e.tx_id DESC, e.position DESC LIMIT 1)`,
  );
  await c.query('VACUUM (ANALYZE) events');
  await c.query('VACUUM (ANALYZE) messages');
}

describe(`the log followers probe the log by index whatever its size (${OLD_ROWS.toLocaleString('en-US')} old events, PostgreSQL)`, () => {
  const fcm = new FakeFcm();
  let db: { url: string; drop: () => Promise<void> };
  let t: TestApp;
  let pg: PgClient;

  beforeAll(async () => {
    fcm.start();
    db = await cloneDatabase();
    const seed = new PgClient({ connectionString: db.url });
    await seed.connect();
    try {
      await fillOldLog(seed);
    } finally {
      await seed.end();
    }
    t = await startTestApp(
      { SERVICE_PUSH_SERVICE_ACCOUNT_FILE: fcm.serviceAccountFile },
      { databaseUrl: db.url, redisPrefix: `t${randomBytes(4).toString('hex')}:` },
    );
    pg = new PgClient({ connectionString: db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await t?.close();
    await db?.drop();
    fcm.stop();
  });

  /**
   * The parts registered with the app's LogTail, once every one has something to build (leases taken,
   * cursors loaded). Building outside a pass only touches a part's note of a pending cursor save, which
   * at worst makes an idle follower write its unchanged position again later.
   */
  async function activeParts(): Promise<LogTailPart[]> {
    const tail = t.app.get(LogTail);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const parts = [...(tail as unknown as { parts: Set<LogTailPart> }).parts];
      const active = composePass(parts).outputs.map((o) => o.part);
      if (active.length === parts.length && parts.length >= EXPECTED_PARTS.length) return parts;
      if (Date.now() > deadline)
        throw new Error(
          `active parts: ${active.map((p) => p.name).join(', ')} of ${parts.map((p) => p.name).join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Every statement's offences, by label and plan (custom, generic); all empty when every read of events is an index range probe. */
  async function probes(
    statements: { label: string; text: string; params: unknown[] }[],
  ): Promise<Record<string, string[]>> {
    const found: Record<string, string[]> = {};
    for (const s of statements) {
      const { custom, generic } = await explain(pg, s.text, s.params);
      found[`${s.label} (custom plan)`] = offences(custom.Plan);
      found[`${s.label} (generic plan)`] = offences(generic.Plan);
    }
    return found;
  }
  const none = (found: Record<string, string[]>) =>
    Object.fromEntries(Object.keys(found).map((k) => [k, []]));

  it('the pass of every part together, and of each part on its own, reads events by index range only', async () => {
    const parts = await activeParts();
    expect(parts.map((p) => p.name).sort()).toEqual(expect.arrayContaining(EXPECTED_PARTS));
    // after a failed shared pass each part runs in a statement of its own
    const found = await probes([
      { label: 'every part', ...composePass(parts) },
      ...parts.map((part) => ({ label: part.name, ...composePass([part]) })),
    ]);
    expect(found).toEqual(none(found));
  });

  it('the pass that also saves a cursor reads events by index range only', async () => {
    const cursor = new SavedCursor(t.app.get(DataSource), 'realtime');
    const at = await cursor.load();
    expect(at).not.toBeNull();
    cursor.advance({ txId: at!.txId, position: at!.position + 1 });
    const saving: LogTailPart = {
      name: 'saving',
      build: (q) => {
        cursor.saveInto(q, true);
        return 'NULL::json';
      },
      apply: () => Promise.resolve({ events: 0, more: false }),
    };
    const pass = composePass([...(await activeParts()), saving]);
    expect(pass.text).toContain('realtime_save AS');
    const found = await probes([{ label: 'with a save', ...pass }]);
    expect(found).toEqual(none(found));
  });

  it('the reads of the log a follower makes when it takes over (staleAfter, head) are index range probes', async () => {
    const real = t.app.get(DataSource);
    const sent: { text: string; params: unknown[] }[] = [];
    const query = (text: string, params: unknown[] = []) => {
      sent.push({ text, params });
      return real.query(text, params);
    };
    // the reader's own statements, recorded on their way to the real database
    const reader = new EventLogReader({ query, manager: { query } } as unknown as DataSource);
    const at = await new SavedCursor(real, 'realtime').load();
    expect(await reader.staleAfter(at!, 120)).toBe(false);
    await reader.head();
    const reads = sent.filter((s) => /\bFROM events\b/.test(s.text));
    expect(reads.length).toBe(2);
    const found = await probes(reads.map((s, i) => ({ label: ['staleAfter', 'head'][i]!, ...s })));
    expect(found).toEqual(none(found));
  });
});
