import { sign } from 'jsonwebtoken';
import { Client } from 'pg';
import { API_KEY, API_SECRET, authHeader, freshStorage, Mode, modesFromArgs, startServer } from './lib';
import { INBOX_COUNTER_BACKFILL } from '../src/database/migrations/1763690820000-inbox-counters';

/**
 * Messaging benchmarks of issue 3, on a production build (`node dist/main.js`):
 * - sends/s and send latency with 16 concurrent senders (each in its own channel, and all in one);
 * - history page latency on a channel of 1M messages (PostgreSQL; seeded with SQL);
 * - GET /v1/me/channels latency for a user in 500 channels with unread messages in each.
 */
const SEND_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const SENDERS = 16;
const HISTORY_MESSAGES = Number(process.env.BENCH_HISTORY_MESSAGES ?? 1_000_000);
const INBOX_CHANNELS = 500;
const INBOX_MESSAGES_PER_CHANNEL = Number(process.env.BENCH_INBOX_MESSAGES ?? 2_000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

function token(sub: string): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({ sub, iat, exp: iat + 3600 }, API_SECRET, { algorithm: 'HS256', keyid: API_KEY });
}

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth = authHeader,
): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

async function timed<T>(fn: () => Promise<T>, lat: number[]): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  lat.push(performance.now() - t0);
  return out;
}

async function sendLoad(base: string, channels: string[], senders: string[]) {
  const lat: number[] = [];
  let errors = 0;
  const until = Date.now() + SEND_SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    senders.map(async (s, i) => {
      const auth = `Bearer ${token(s)}`;
      const ch = channels[i % channels.length]!;
      let n = 0;
      while (Date.now() < until) {
        try {
          await timed(
            () =>
              api(base, 'POST', `/v1/channels/${ch}/messages`, { content: `hello ${n++} from ${s}` }, auth),
            lat,
          );
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    sendsPerSecond: lat.length / seconds,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    total: lat.length,
    errors,
  };
}

async function benchSends(mode: Mode) {
  const storage = await freshStorage(mode);
  const server = await startServer(storage, {
    SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    LOG_LEVEL: 'warn',
  });
  try {
    const senders = Array.from({ length: SENDERS }, (_, i) => `s${i}`);
    await api(server.baseUrl, 'POST', '/v1/users', {
      users: senders.map((external_id) => ({ external_id, name: external_id })),
    });
    const own: string[] = [];
    for (const s of senders) {
      own.push(
        (
          await api(server.baseUrl, 'POST', '/v1/channels', {
            type: 'group',
            external_id: `own-${s}`,
            created_by: s,
          })
        ).id,
      );
    }
    const shared = (
      await api(server.baseUrl, 'POST', '/v1/channels', {
        type: 'group',
        external_id: 'shared',
        created_by: 's0',
        member_external_ids: senders,
      })
    ).id;
    await sendLoad(server.baseUrl, own, senders); // warm-up
    const separate = await sendLoad(server.baseUrl, own, senders);
    const one = await sendLoad(server.baseUrl, [shared], senders);
    return { mode, separate, one };
  } finally {
    await server.stop();
    await storage.drop();
  }
}

/** Seeds with SQL straight into the service's database (the same schema the migrations made). */
async function seed(url: string, sql: string, params: unknown[] = []) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

async function benchReads() {
  const storage = await freshStorage('postgres');
  const server = await startServer(storage, { LOG_LEVEL: 'warn' });
  const url = storage.env.DATABASE_URL!;
  try {
    await api(server.baseUrl, 'PUT', '/v1/users/reader', { name: 'Reader' });
    await api(server.baseUrl, 'PUT', '/v1/users/writer', { name: 'Writer' });
    const big = await api(server.baseUrl, 'POST', '/v1/channels', {
      type: 'group',
      external_id: 'big',
      created_by: 'reader',
      member_external_ids: ['writer'],
    });
    const t0 = performance.now();
    await seed(
      url,
      `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
       SELECT gen_random_uuid(), c.workspace_id, c.id, u.id, u.id::text, 'text', 'message number ' || g,
              now() - make_interval(secs => ($2 - g) / 10.0)
         FROM channels c, users u, generate_series(1, $2) g
        WHERE c.id = $1 AND u.external_id = 'writer' AND u.workspace_id = c.workspace_id`,
      [big.id, HISTORY_MESSAGES],
    );
    await seed(url, 'ANALYZE');
    const seedHistoryS = (performance.now() - t0) / 1000;

    const reader = `Bearer ${token('reader')}`;
    const first: number[] = [];
    const deep: number[] = [];
    for (let i = 0; i < 200; i++)
      await timed(
        () => api(server.baseUrl, 'GET', `/v1/channels/${big.id}/messages?limit=50`, undefined, reader),
        first,
      );
    let cursor: string | null = null;
    for (let i = 0; i < 200; i++) {
      const page: { next_cursor: string | null } = await timed(
        () =>
          api(
            server.baseUrl,
            'GET',
            `/v1/channels/${big.id}/messages?limit=50${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`,
            undefined,
            reader,
          ),
        deep,
      );
      cursor = page.next_cursor;
    }

    // inbox: a user in 500 channels, each with messages, half of them unread, some mentioning them
    const t1 = performance.now();
    await seed(
      url,
      `WITH w AS (SELECT workspace_id, id AS reader FROM users WHERE external_id = 'reader'),
            wr AS (SELECT id AS writer FROM users WHERE external_id = 'writer')
       INSERT INTO channels (id, workspace_id, type, external_id, name, created_at)
       SELECT gen_random_uuid(), w.workspace_id, 'group', 'inbox-' || g, 'Inbox ' || g, now() - interval '1 day'
         FROM w, generate_series(1, $1) g`,
      [INBOX_CHANNELS],
    );
    await seed(
      url,
      `INSERT INTO channel_members (channel_id, user_id, workspace_id, role, joined_at, last_read_at, last_delivered_at)
       SELECT c.id, u.id, c.workspace_id, 'member', now() - interval '1 day', now() - interval '1 day' + make_interval(secs => $1 / 2 * 10), now()
         FROM channels c JOIN users u ON u.workspace_id = c.workspace_id AND u.external_id IN ('reader', 'writer')
        WHERE c.external_id LIKE 'inbox-%'`,
      [INBOX_MESSAGES_PER_CHANNEL],
    );
    await seed(
      url,
      `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
       SELECT gen_random_uuid(), c.workspace_id, c.id, u.id, u.id::text, 'text', 'inbox message ' || g,
              now() - interval '1 day' + make_interval(secs => g * 10)
         FROM channels c JOIN users u ON u.workspace_id = c.workspace_id AND u.external_id = 'writer',
              generate_series(1, $1) g
        WHERE c.external_id LIKE 'inbox-%'`,
      [INBOX_MESSAGES_PER_CHANNEL],
    );
    await seed(
      url,
      `UPDATE channels c SET last_message_at = (SELECT max(created_at) FROM messages m WHERE m.channel_id = c.id) WHERE c.external_id LIKE 'inbox-%'`,
    );
    // the counters the inbox counts unread messages from, as chat_send_message keeps them
    for (const sql of INBOX_COUNTER_BACKFILL) await seed(url, sql);
    await seed(url, 'ANALYZE');
    const seedInboxS = (performance.now() - t1) / 1000;
    const inbox: number[] = [];
    const inboxDeep: number[] = [];
    let unread = 0;
    for (let i = 0; i < 100; i++) {
      const page = await timed(
        () => api(server.baseUrl, 'GET', '/v1/me/channels?limit=50', undefined, reader),
        inbox,
      );
      unread = Math.max(0, ...page.channels.map((c: { unread_count: number }) => c.unread_count));
    }
    for (let i = 0; i < 20; i++) {
      let before: string | null = null;
      do {
        const page: { next_cursor: string | null } = await timed(
          () =>
            api(
              server.baseUrl,
              'GET',
              `/v1/me/channels?limit=100${before ? `&before=${encodeURIComponent(before)}` : ''}`,
              undefined,
              reader,
            ),
          inboxDeep,
        );
        before = page.next_cursor;
      } while (before);
    }
    return { seedHistoryS, first, deep, seedInboxS, inbox, inboxDeep, unread };
  } finally {
    await server.stop();
    await storage.drop();
  }
}

async function main() {
  const modes = modesFromArgs(process.argv.slice(2));
  const lines: string[] = [];
  lines.push('| mode | senders → channels | sends/s | p50 | p99 | errors |', '|---|---|---|---|---|---|');
  for (const mode of modes) {
    const r = await benchSends(mode);
    lines.push(
      `| ${mode} | 16 → 16 (one each) | ${r.separate.sendsPerSecond.toFixed(0)} | ${ms(r.separate.p50)} | ${ms(r.separate.p99)} | ${r.separate.errors} |`,
    );
    lines.push(
      `| ${mode} | 16 → 1 (shared) | ${r.one.sendsPerSecond.toFixed(0)} | ${ms(r.one.p50)} | ${ms(r.one.p99)} | ${r.one.errors} |`,
    );
    process.stdout.write(`${lines.slice(-2).join('\n')}\n`);
  }
  if (modes.includes('postgres')) {
    const r = await benchReads();
    lines.push(
      '',
      `History on a channel of ${HISTORY_MESSAGES.toLocaleString('en')} messages (PostgreSQL, seeded in ${r.seedHistoryS.toFixed(0)} s), 50 per page:`,
      '',
      '| request | n | p50 | p99 |',
      '|---|---|---|---|',
      `| newest page | ${r.first.length} | ${ms(pct(r.first, 50))} | ${ms(pct(r.first, 99))} |`,
      `| 200 pages back with \`before\` | ${r.deep.length} | ${ms(pct(r.deep, 50))} | ${ms(pct(r.deep, 99))} |`,
      '',
      `GET /v1/me/channels for a user in ${INBOX_CHANNELS} channels × ${INBOX_MESSAGES_PER_CHANNEL.toLocaleString('en')} messages, half unread (up to ${r.unread} unread per channel; seeded in ${r.seedInboxS.toFixed(0)} s):`,
      '',
      '| request | n | p50 | p99 |',
      '|---|---|---|---|',
      `| first page (limit 50) | ${r.inbox.length} | ${ms(pct(r.inbox, 50))} | ${ms(pct(r.inbox, 99))} |`,
      `| every page (limit 100, 5 pages) | ${r.inboxDeep.length} | ${ms(pct(r.inboxDeep, 50))} | ${ms(pct(r.inboxDeep, 99))} |`,
    );
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
