/**
 * `npx ts-node --transpile-only bench/send-function.ts`: chat_send_message alone, without Node, under
 * pgbench, on a private PostgreSQL cluster migrated by the service, with schema variants alternated
 * against the schema as migrated (A/B, `--pairs`). What a variant saves is PostgreSQL's own work per
 * send: backend CPU per call (every process of the cluster), and WAL records per call (a count, not a
 * time, so it does not move with the machine's load).
 *
 * Options: --pairs 3 --seconds 15 --clients 16 --scenario own|one (own: each client sends in a channel
 *   of its own; one: all in one channel) --variants a,b (default: all of VARIANTS)
 *   --pg-bin /usr/lib/postgresql/15/bin --pg-os-user postgres
 */
import { execFileSync } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdtempSync, writeFileSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import { join } from 'path';
import { authHeader, BENCH_REDIS_URL, median, startServer } from './lib';
import {
  cleanupAll,
  installSignalHandlers,
  log,
  PgCluster,
  pgQuery,
  readStatements,
  resetStatements,
  startPostgres,
} from './compare/infra';

interface Variant {
  name: string;
  /** Applied before the variant's run, on the migrated schema. */
  on: string[];
  /** Undoes `on` (back to the schema as migrated). */
  off: string[];
  /** The variant's own pgbench script (default: the one send), and the messages each of its calls stores. */
  script?: (scenario: string) => string;
  messagesPerCall?: number;
}

/** One send through chat_send_message, as a request does alone. */
const SEND = (
  script: string,
) => `SELECT user_id AS u, workspace_id AS w, channel_id AS c FROM bench_senders WHERE n = :client_id \\gset
${script}`;

/** A batch as SendBatcher hands chat_send_messages under load (5–6 sends of one instance a statement). */
const BATCH = 6;

const VARIANTS: Variant[] = [
  {
    name: 'no-event-workspace-fk',
    on: ['ALTER TABLE events DROP CONSTRAINT events_workspace_id_fkey'],
    off: [
      `ALTER TABLE events ADD CONSTRAINT events_workspace_id_fkey FOREIGN KEY (workspace_id)
         REFERENCES workspaces (id) ON DELETE CASCADE NOT VALID`,
      'ALTER TABLE events VALIDATE CONSTRAINT events_workspace_id_fkey',
    ],
  },
  {
    name: 'events-created-brin',
    on: ['DROP INDEX events_created_at', 'CREATE INDEX events_created_at ON events USING brin (created_at)'],
    off: ['DROP INDEX events_created_at', 'CREATE INDEX events_created_at ON events (created_at)'],
  },
  {
    // an event row with two indexes (order and channel seq) instead of six
    name: 'two-event-indexes',
    on: [
      'DROP INDEX events_created_at',
      'DROP INDEX events_workspace_order',
      'ALTER TABLE events DROP CONSTRAINT events_id_key',
      'DROP INDEX events_tx_order',
    ],
    off: [
      'CREATE INDEX events_created_at ON events (created_at)',
      'CREATE INDEX events_workspace_order ON events (workspace_id, tx_id, position)',
      'ALTER TABLE events ADD CONSTRAINT events_id_key UNIQUE (id)',
      'CREATE INDEX events_tx_order ON events (tx_id, position)',
    ],
  },
  {
    // the row locks and SPI probes of the message's and the event's foreign keys
    name: 'no-send-fks',
    on: [
      'ALTER TABLE messages DROP CONSTRAINT messages_user_id_fkey',
      'ALTER TABLE messages DROP CONSTRAINT messages_channel_workspace_fkey',
      'ALTER TABLE events DROP CONSTRAINT events_workspace_id_fkey',
    ],
    off: [
      'ALTER TABLE messages ADD CONSTRAINT messages_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL',
      `ALTER TABLE messages ADD CONSTRAINT messages_channel_workspace_fkey FOREIGN KEY (channel_id, workspace_id)
         REFERENCES channels (id, workspace_id) ON DELETE CASCADE`,
      'ALTER TABLE events ADD CONSTRAINT events_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE',
    ],
  },
  {
    // the sends as group commit stores them under load: BATCH messages in one chat_send_messages call
    name: 'group-commit-batch',
    on: [],
    off: [],
    messagesPerCall: BATCH,
    script: () =>
      SEND(`SELECT * FROM chat_send_messages(ARRAY[:c::text], (SELECT jsonb_agg(jsonb_build_object(
  'channel', :c::text, 'workspace', :w::text, 'user', :u::text, 'sender_key', :u::text, 'type', 'text',
  'content', 'hello from the benchmark, nothing to moderate here ' || :client_id, 'mentions', '[]'::jsonb,
  'by_user', false, 'shadowed', false, 'event_ids', jsonb_build_array(gen_random_uuid()),
  'event_types', '["message.created"]'::jsonb, 'payloads', jsonb_build_array('${PAYLOAD}'::jsonb)))
  FROM generate_series(1, ${BATCH})));`),
  },
  {
    // the floor of any rewrite that stores what a send stores today (message row, event row with the
    // message's payload, channel and member counters): BATCH messages of one channel in one statement,
    // one INSERT per table and one UPDATE per counter, no per-message executor start-up, no checks
    name: 'set-based-floor',
    on: [],
    off: [],
    messagesPerCall: BATCH,
    script: () =>
      SEND(`WITH ch AS (
  UPDATE channels SET last_seq = last_seq + ${BATCH}, message_count = message_count + ${BATCH},
         last_message_at = clock_timestamp() WHERE id = :c::uuid RETURNING last_seq, message_count),
cm AS (UPDATE channel_members SET sent_count = sent_count + ${BATCH}, last_sent_at = clock_timestamp()
        WHERE channel_id = :c::uuid AND user_id = :u::uuid RETURNING sent_count),
msg AS (
  INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at, channel_no, sender_no)
  SELECT gen_random_uuid(), :w::uuid, :c::uuid, :u::uuid, :u::text, 'text',
         'hello from the benchmark, nothing to moderate here ' || :client_id::int, clock_timestamp(),
         ch.message_count - ${BATCH} + g, cm.sent_count - ${BATCH} + g
    FROM ch, cm, generate_series(1, ${BATCH}) g
  RETURNING id, channel_no, created_at)
INSERT INTO events (id, workspace_id, channel_id, seq, type, payload)
SELECT gen_random_uuid(), :w::uuid, :c::uuid, ch.last_seq - ${BATCH} + row_number() OVER (), 'message.created',
       jsonb_set(jsonb_set('${PAYLOAD}'::jsonb, '{message,id}', to_jsonb(msg.id)), '{message,created_at}', to_jsonb(msg.created_at))
  FROM ch, msg;`),
  },
  {
    // the peer's unit of work (../shared/peer-bench: ejabberd 23.01, mod_mam with db_type sql): one
    // INSERT into its archive table, as its pg.sql creates it, in autocommit, per message of a room (the
    // stanza's colons are written '~': pgbench would read ':name' as a variable even inside a literal)
    name: 'peer-archive-insert',
    on: [
      `CREATE TABLE archive (username text NOT NULL, timestamp bigint NOT NULL, peer text NOT NULL,
         bare_peer text NOT NULL, xml text NOT NULL, txt text NOT NULL, id bigserial NOT NULL UNIQUE,
         kind text, nick text, created_at timestamp NOT NULL DEFAULT now())`,
      'CREATE INDEX i_username_timestamp ON archive USING btree (username, timestamp)',
      'CREATE INDEX i_username_peer ON archive USING btree (username, peer)',
      'CREATE INDEX i_username_bare_peer ON archive USING btree (username, bare_peer)',
      'CREATE INDEX i_timestamp ON archive USING btree (timestamp)',
    ],
    off: ['DROP TABLE archive'],
    script: () => `INSERT INTO archive (username, timestamp, peer, bare_peer, xml, txt, kind, nick)
VALUES ('room' || :client_id::int || '@conference.localhost', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint,
  'room' || :client_id::int || '@conference.localhost/sender' || :client_id::int, 'room' || :client_id::int || '@conference.localhost',
  replace('<message xmlns="jabber~client" xml~lang="en" to="room' || :client_id::int || '@conference.localhost" from="room' || :client_id::int || '@conference.localhost/sender' || :client_id::int || '" type="groupchat" id="' || gen_random_uuid() || '"><archived by="room' || :client_id::int || '@conference.localhost" xmlns="urn~xmpp~mam~tmp" id="' || (extract(epoch FROM clock_timestamp()) * 1000000)::bigint || '"/><stanza-id by="room' || :client_id::int || '@conference.localhost" xmlns="urn~xmpp~sid~0" id="' || (extract(epoch FROM clock_timestamp()) * 1000000)::bigint || '"/><body>hello from the benchmark, nothing to moderate here ' || :client_id::int || '</body></message>', '~', chr(58)),
  'hello from the benchmark, nothing to moderate here ' || :client_id::int, 'groupchat', 'sender' || :client_id::int);
`,
  },
];

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const PG_BIN = flag('pg-bin', process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin');
const PAIRS = Number(flag('pairs', '3'));
const SECONDS = Number(flag('seconds', '15'));
const CLIENTS = Number(flag('clients', '16'));
const SCENARIO = flag('scenario', 'own');
const ONLY = flag('variants', VARIANTS.map((v) => v.name).join(',')).split(',');

/** The same payload shape as a REST send's message.created (the function sets the id and the time). */
// pgbench reads `:name` as a variable: a space after every colon of the JSON
const PAYLOAD = JSON.stringify(
  {
    message: {
      id: '00000000-0000-7000-8000-000000000000',
      channel_id: 'CH',
      type: 'text',
      content: 'hello from the benchmark, nothing to moderate here',
      user: { id: 'U', external_id: 'u', name: 'U', avatar_url: null },
      created_at: '1970-01-01T00:00:00.000Z',
      attachment_url: null,
      parent_id: null,
      mentions: [],
      metadata: {},
    },
  },
  null,
  1,
).replace(/\n\s*/g, ' ');

async function setup(pg: PgCluster): Promise<string> {
  await pg.admin('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await pg.admin('CREATE DATABASE chat');
  const server = await startServer(
    {
      env: {
        DATABASE_URL: pg.url('chat'),
        REDIS_URL: BENCH_REDIS_URL,
        SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        SERVICE_REDIS_PREFIX: `send-function-${process.pid}:`,
      },
      drop: async () => undefined,
    },
    { LOG_LEVEL: 'warn' },
  );
  try {
    const call = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { Authorization: authHeader, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    };
    for (let i = 0; i < CLIENTS; i++) await call('PUT', `/v1/users/u${i}`, { name: `User ${i}` });
    for (let i = 0; i < CLIENTS; i++)
      await call('POST', '/v1/channels', {
        type: 'group',
        external_id: `own${i}`,
        created_by: `u${i}`,
        member_external_ids: [],
      });
    const all = Array.from({ length: CLIENTS }, (_, i) => `u${i}`);
    await call('POST', '/v1/channels', {
      type: 'group',
      external_id: 'shared',
      created_by: 'u0',
      member_external_ids: all,
    });
  } finally {
    await server.stop();
  }
  // pgbench's client_id (0..n-1) picks the sender and its channel
  await pgQuery(
    pg.url('chat'),
    `CREATE TABLE bench_senders AS
       SELECT substring(u.external_id FROM 2)::int AS n, u.id AS user_id, u.workspace_id, c.id AS channel_id
         FROM users u JOIN channels c ON c.workspace_id = u.workspace_id
          AND c.external_id = ${SCENARIO === 'one' ? `'shared'` : `'own' || substring(u.external_id FROM 2)`}`,
  );
  return SEND(`SELECT * FROM chat_send_message(:c::uuid, :w::uuid, :u::uuid, :u::text, 'text',
  'hello from the benchmark, nothing to moderate here ' || :client_id, NULL, NULL, NULL, NULL, '{}'::uuid[], NULL, false, NULL,
  true, false, ARRAY[gen_random_uuid()], ARRAY['message.created'], ARRAY['${PAYLOAD}'::jsonb], NULL::uuid, false, NULL::text);
`);
}

const scriptDir = mkdtempSync(join(tmpdir(), 'send-function-'));
function scriptFile(name: string, text: string): string {
  const file = join(scriptDir, `${name}.sql`);
  writeFileSync(file, text);
  return file;
}

interface Run {
  variant: string;
  applied: boolean;
  tps: number;
  cpuMsPerCall: number;
  walPerCall: number;
  load: number;
}

async function run(pg: PgCluster, send: string, variant: Variant, applied: boolean): Promise<Run> {
  if (applied) for (const sql of variant.on) await pgQuery(pg.url('chat'), sql);
  const script = scriptFile(
    applied && variant.script ? variant.name : 'send',
    applied && variant.script ? variant.script(SCENARIO) : send,
  );
  const perCall = applied ? (variant.messagesPerCall ?? 1) : 1;
  await pgQuery(pg.url('chat'), 'VACUUM ANALYZE messages, events, channels, channel_members');
  await pg.admin('CHECKPOINT');
  await resetStatements(pg);
  const cpu = pg.cpuMs();
  const out = execFileSync(
    join(PG_BIN, 'pgbench'),
    [
      '-n',
      '-M',
      'prepared',
      '-c',
      String(CLIENTS),
      '-j',
      '2',
      '-T',
      String(SECONDS),
      '-f',
      script,
      pg.url('chat'),
    ],
    { encoding: 'utf8' },
  );
  const cpuMs = pg.cpuMs() - cpu;
  // messages stored per second, and per message: every top-level statement's WAL but the sender lookup
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN) * perCall;
  const n = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1] ?? NaN) * perCall;
  const wal = (await readStatements(pg, 'chat'))
    .filter((s) => s.toplevel && !s.query.includes('bench_senders'))
    .reduce((a, s) => a + s.walRecords, 0);
  if (applied) for (const sql of variant.off) await pgQuery(pg.url('chat'), sql);
  return {
    variant: variant.name,
    applied,
    tps,
    cpuMsPerCall: cpuMs / n,
    walPerCall: wal / n,
    load: loadavg()[0]!,
  };
}

async function main(): Promise<void> {
  installSignalHandlers();
  const pg = await startPostgres(PG_BIN, flag('pg-os-user', 'postgres'));
  try {
    const script = await setup(pg);
    log(
      `scenario ${SCENARIO}, ${CLIENTS} clients, ${SECONDS} s per run, ${PAIRS} pairs per variant; load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    const rows: string[] = [];
    for (const v of VARIANTS.filter((x) => ONLY.includes(x.name))) {
      const runs: Run[] = [];
      for (let i = 0; i < PAIRS; i++) {
        for (const applied of i % 2 ? [true, false] : [false, true]) {
          const r = await run(pg, script, v, applied);
          runs.push(r);
          log(
            `  ${v.name} ${applied ? 'on ' : 'off'}: ${r.tps.toFixed(0)} calls/s, ${r.cpuMsPerCall.toFixed(3)} ms CPU/call, ${r.walPerCall.toFixed(1)} WAL records/call, load ${r.load.toFixed(1)}`,
          );
        }
      }
      const m = (applied: boolean, k: 'tps' | 'cpuMsPerCall' | 'walPerCall') =>
        median(runs.filter((r) => r.applied === applied).map((r) => r[k]));
      rows.push(
        `| ${v.name} | ${m(false, 'tps').toFixed(0)} → ${m(true, 'tps').toFixed(0)} | ${m(false, 'cpuMsPerCall').toFixed(3)} → ${m(true, 'cpuMsPerCall').toFixed(3)} | ${m(false, 'walPerCall').toFixed(1)} → ${m(true, 'walPerCall').toFixed(1)} |`,
      );
    }
    process.stdout.write(
      `\n| variant (${SCENARIO} channels) | messages/s, one send → variant (median) | PostgreSQL CPU ms per message | WAL records per message |\n|---|---|---|---|\n${rows.join('\n')}\n`,
    );
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
