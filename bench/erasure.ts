import { readFileSync } from 'fs';
import { Client } from 'pg';
import {
  authHeader,
  freshStorage,
  loadAverage,
  machine,
  Server,
  startServer,
  writeBenchmarkSection,
  writeSearchDocuments,
} from './lib';

/**
 * User erasure (CONTRACT §20) of a user with a million messages, on PostgreSQL + Redis the way
 * production runs it: an API instance (`SERVICE_ROLE=api`) answers the DELETE with 202 and a worker
 * instance (`SERVICE_ROLE=worker`, started fresh for each run, so its VmHWM is the run's) carries the
 * `user.erase` job out through BullMQ.
 *
 *   npm run bench:erasure            (BENCH_ERASURE_MESSAGES=1000000 by default)
 *
 * One database of its own (created on BENCH_DATABASE_URL's server, dropped at the end): 20 group
 * channels; `bo` and `di` wrote BENCH_ERASURE_MESSAGES messages each, spread over the channels, and
 * Ana a tenth as many between them (one INSERT … SELECT generate_series with the inbox counters
 * computed in it, the search documents (message_search) written and indexed after); Bo and Di each reacted to 10,000 of Ana's messages
 * and were mentioned in 10,000. Then Bo is erased with `messages=anonymize` and Di with
 * `messages=delete`. Reported per run: the DELETE's own time, the time until the job is done, the
 * longest transaction (pg_stat_activity's xact_start of every client backend, sampled every 10 ms:
 * the batches, the request's transaction, and whatever else ran), the latency of sends by Ana into one
 * of the channels meanwhile (one every 250 ms: how long a batch holds the channel's lock), the worker's
 * peak RSS (/proc/<pid>/status VmHWM) and /proc/loadavg.
 */
const N = Number(process.env.BENCH_ERASURE_MESSAGES ?? 1_000_000);
const CHANNELS = 20;
const REACTIONS = Math.min(10_000, N);
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const procLoad = () => readFileSync('/proc/loadavg', 'utf8').trim();
const vm = (pid: number, field: 'VmHWM' | 'VmRSS'): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const fmt = (n: number, d = 0) =>
  n.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d });

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: authHeader,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function must(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  ok = [200, 201],
): Promise<any> {
  const r = await api(base, method, path, body);
  if (!ok.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

interface Longest {
  ms: number;
  query: string;
}

/**
 * The longest transactions seen, from every client backend's xact_start sampled every `everyMs`, with
 * the statement each was running then: of all; of all but the service's log followers (the realtime,
 * webhook and push relays: one statement each, marked `/* log-follower *\/`); and of those holding a
 * channel's write lock (an advisory lock: the erasure's batches, and the sends).
 */
function transactionSampler(url: string, everyMs = 10) {
  const pg = new Client({ connectionString: url });
  const longest: Record<'all' | 'other' | 'locked', Longest> = {
    all: { ms: 0, query: '' },
    other: { ms: 0, query: '' },
    locked: { ms: 0, query: '' },
  };
  let samples = 0;
  let stopped = false;
  const done = (async () => {
    await pg.connect();
    while (!stopped) {
      const { rows } = await pg.query<{ kind: 'follower' | 'locked' | 'other'; ms: number; query: string }>(
        `SELECT DISTINCT ON (kind) kind, ms, query FROM (
           SELECT CASE WHEN a.query LIKE '/* log-follower */%' THEN 'follower'
                       WHEN EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)
                       THEN 'locked' ELSE 'other' END AS kind,
                  (extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::float8 AS ms,
                  regexp_replace(left(a.query, 160), '\\s+', ' ', 'g') AS query
             FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
              AND a.xact_start IS NOT NULL) x
          ORDER BY kind, ms DESC`,
      );
      for (const r of rows) {
        const seen = { ms: r.ms, query: r.query };
        if (r.ms > longest.all.ms) longest.all = seen;
        if (r.kind !== 'follower' && r.ms > longest.other.ms) longest.other = seen;
        if (r.kind === 'locked' && r.ms > longest.locked.ms) longest.locked = seen;
      }
      samples++;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    await pg.end();
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return { longest, samples };
    },
  };
}

/** A process's V8 heap in use (GET /metrics), in MiB. */
async function heapUsed(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : NaN;
}

/**
 * The worker's heap in use, sampled every `everyMs`: its peak (garbage included: V8 collects lazily)
 * and the lowest reading of the run's second half (what is left after major collections, which
 * would grow with the erasure if anything were kept per message).
 */
function heapSampler(base: string, everyMs = 2000) {
  const samples: number[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const h = await heapUsed(base).catch(() => NaN);
      if (process.env.BENCH_ERASURE_TRACE_HEAP) log(`worker heap used ${h.toFixed(1)} MiB`);
      if (Number.isFinite(h)) samples.push(h);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return {
        peak: Math.max(...samples),
        lateLow: Math.min(...samples.slice(Math.floor(samples.length / 2))),
      };
    },
  };
}

/** Sends by Ana into one channel every `everyMs` while the erasure runs: their latencies. */
function sendProbe(base: string, channelId: string, everyMs = 250) {
  const lat: number[] = [];
  const failures: number[] = [];
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const t0 = performance.now();
      const r = await api(base, 'POST', `/v1/channels/${channelId}/messages`, {
        content: `probe ${i}`,
        user_external_id: 'ana',
      });
      if (r.status === 201) lat.push(performance.now() - t0);
      else failures.push(r.status);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return { lat, failures };
    },
  };
}

interface RunResult {
  mode: string;
  requestMs: number;
  totalS: number;
  messagesDone: number;
  longest: Record<'all' | 'other' | 'locked', Longest>;
  samples: number;
  heapPeakMiB: number;
  heapLowMiB: number;
  sendP50: number;
  sendP99: number;
  sendMax: number;
  sends: number;
  sendFailures: number[];
  workerIdleMiB: number;
  workerPeakMiB: number;
  loadBefore: string;
  loadAfter: string;
  check: string;
}

async function seed(
  pg: Client,
  ws: string,
  channelIds: string[],
  users: Record<string, string>,
): Promise<number> {
  const t0 = performance.now();
  // bo at even seconds, di at odd ones, ana every 20 s; the inbox counters as chat_send_message keeps them
  await pg.query(
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at, channel_no, sender_no)
     SELECT gen_random_uuid(), $1, x.channel_id, x.user_id, x.user_id::text, 'text', x.content, x.created_at,
            row_number() OVER (PARTITION BY x.channel_id ORDER BY x.created_at),
            row_number() OVER (PARTITION BY x.channel_id, x.user_id ORDER BY x.created_at)
       FROM (
         SELECT ($2::uuid[])[1 + g % ${CHANNELS}] AS channel_id, u.id AS user_id,
                'status update ' || g || ' on release ' || (g % 97) || ' from ' || u.name AS content,
                timestamptz '2026-01-01' + make_interval(secs => g * 2 + u.k) AS created_at
           FROM generate_series(1, $3::int) g,
                (VALUES ($4::uuid, 'Bo', 0), ($5::uuid, 'Di', 1)) AS u(id, name, k)
         UNION ALL
         SELECT ($2::uuid[])[1 + g % ${CHANNELS}], $6::uuid, 'ana writes ' || g, timestamptz '2026-01-01' + make_interval(secs => g * 20)
           FROM generate_series(1, $3::int / 10) g) x`,
    [ws, channelIds, N, users.bo, users.di, users.ana],
  );
  await pg.query(
    `UPDATE channels c SET message_count = x.n, last_message_at = x.last
       FROM (SELECT channel_id, max(channel_no) AS n, max(created_at) AS last FROM messages GROUP BY channel_id) x WHERE x.channel_id = c.id`,
  );
  await pg.query(
    `UPDATE channel_members cm SET sent_count = x.n
       FROM (SELECT channel_id, user_id, max(sender_no) AS n FROM messages WHERE user_id IS NOT NULL GROUP BY channel_id, user_id) x
      WHERE x.channel_id = cm.channel_id AND x.user_id = cm.user_id`,
  );
  for (const [who, offset] of [
    ['bo', 0],
    ['di', REACTIONS],
  ] as const) {
    await pg.query(
      `INSERT INTO reactions (message_id, user_id, channel_id, emoji)
       SELECT id, $1, channel_id, '👍' FROM messages WHERE user_id = $2 ORDER BY created_at LIMIT $3 OFFSET $4`,
      [users[who], users.ana, REACTIONS, offset],
    );
    await pg.query(
      `INSERT INTO message_mentions (message_id, user_id, channel_id, position, created_at)
       SELECT id, $1, channel_id, 0, created_at FROM messages WHERE user_id = $2 ORDER BY created_at LIMIT $3 OFFSET $4`,
      [users[who], users.ana, REACTIONS, offset],
    );
  }
  await pg.query(`SET maintenance_work_mem = '256MB'`);
  await writeSearchDocuments(pg);
  await pg.query(`VACUUM ANALYZE`);
  return (performance.now() - t0) / 1000;
}

async function erase(
  storage: Awaited<ReturnType<typeof freshStorage>>,
  server: Server,
  pg: Client,
  mode: 'anonymize' | 'delete',
  who: string,
  userId: string,
  probeChannel: string,
): Promise<RunResult> {
  const worker = await startServer(storage, { SERVICE_ROLE: 'worker', LOG_LEVEL: 'warn' });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    const workerIdleMiB = vm(worker.pid, 'VmHWM');
    const loadBefore = procLoad();
    const logEnd =
      (await pg.query<{ p: string | null }>(`SELECT max(position)::text AS p FROM events`)).rows[0]!.p ?? '0';
    const sampler = transactionSampler(storage.env.DATABASE_URL!);
    const heap = heapSampler(worker.baseUrl);
    const probe = sendProbe(server.baseUrl, probeChannel);
    const t0 = performance.now();
    const res = await api(server.baseUrl, 'DELETE', `/v1/users/${who}?messages=${mode}`);
    const requestMs = performance.now() - t0;
    if (res.status !== 202) throw new Error(`DELETE ${who}: ${res.status} ${JSON.stringify(res.body)}`);
    const jobId = res.body.job_id as string;
    log(`${mode}: 202 in ${requestMs.toFixed(0)} ms, job ${jobId}`);
    let state: { status: string; messages_done: number };
    let lastLog = 0;
    for (;;) {
      state = await must(server.baseUrl, 'GET', `/v1/erasures/${jobId}`);
      if (state.status === 'done') break;
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        log(
          `${mode}: ${fmt(state.messages_done)} messages after ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const totalS = (performance.now() - t0) / 1000;
    const { lat, failures } = await probe.stop();
    const { longest, samples } = await sampler.stop();
    const { peak: heapPeakMiB, lateLow: heapLowMiB } = await heap.stop();
    const workerPeakMiB = vm(worker.pid, 'VmHWM');
    const loadAfter = procLoad();
    const check = (
      await pg.query<{ n: number; live: number; named: number; users: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE deleted_at IS NULL)::int AS live,
                count(*) FILTER (WHERE user_id IS NOT NULL)::int AS named,
                (SELECT count(*)::int FROM users WHERE id = $1::uuid) AS users
           FROM messages WHERE sender_key = $2::text`,
        [userId, userId],
      )
    ).rows[0]!;
    const events = (
      await pg.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE type = 'message.deleted' AND position > $1::bigint`,
        [logEnd],
      )
    ).rows[0]!.n;
    const summary = `${fmt(check.n)} of the user's messages left (${fmt(check.live)} not blank, ${fmt(check.named)} naming the user), user row ${check.users ? 'still there' : 'gone'}, ${fmt(events)} message.deleted events`;
    log(
      `${mode}: done in ${totalS.toFixed(1)} s; ${summary}; longest transactions ${JSON.stringify(longest)}`,
    );
    return {
      mode,
      requestMs,
      totalS,
      messagesDone: state.messages_done,
      longest,
      samples,
      heapPeakMiB,
      heapLowMiB,
      sendP50: pct(lat, 50),
      sendP99: pct(lat, 99),
      sendMax: Math.max(...lat),
      sends: lat.length,
      sendFailures: failures,
      workerIdleMiB,
      workerPeakMiB,
      loadBefore,
      loadAfter,
      check: summary,
    };
  } finally {
    await worker.stop();
  }
}

const quoted = (q: string) => `${q.replace(/`/g, "'")}…`;

/** What the runs say, from their numbers. */
function reading(runs: RunResult[]): string {
  const per = (r: RunResult) => (500 * 1000) / (r.messagesDone / r.totalS);
  return [
    `- Throughput: ${runs.map((r) => `${r.mode} ${fmt(r.messagesDone / r.totalS)} messages/s (${fmt(per(r))} ms per batch of 500 on average)`).join(', ')}.`,
    `- No transaction lasted longer than ${fmt(Math.max(...runs.map((r) => r.longest.other.ms)))} ms apart from the log followers, and none holding a channel's write lock longer than ${fmt(Math.max(...runs.map((r) => r.longest.locked.ms)))} ms; Ana's sends into a channel being erased took at most ${fmt(Math.max(...runs.map((r) => r.sendMax)))} ms (p99 ${runs.map((r) => `${fmt(r.sendP99)} ms`).join(' and ')}).`,
    '- The request itself only makes the user an anonymous placeholder, leaves the channels and counts up to 1,001 messages: ' +
      runs.map((r) => `${fmt(r.requestMs)} ms`).join(' and ') +
      '.',
    `- The worker's heap in use goes back to ${runs.map((r) => `${fmt(r.heapLowMiB)} MiB`).join(' and ')} in the second half of each run (peaks of ${runs.map((r) => `${fmt(r.heapPeakMiB)} MiB`).join(' and ')} are garbage not yet collected): nothing is kept per message. Its RSS peak (${runs.map((r) => `${fmt(r.workerPeakMiB)} MiB`).join(', ')}) is that heap's high-water mark over a ${fmt(runs[0]!.workerIdleMiB)} MiB idle process.`,
    ...runs
      .filter((r) => r.longest.other.query.startsWith('DELETE FROM users'))
      .map(
        (r) =>
          `- ${r.mode}: the longest transaction apart from the log followers (${fmt(r.longest.other.ms)} ms) is the last step, the placeholder row's DELETE: its foreign keys look for the user's messages, reactions and mentions through their indexes, which still hold the entries of the ${fmt(N)} rows the batches changed until they are vacuumed. It holds no channel's lock.`,
      ),
    ...runs
      .filter((r) => r.longest.all.query.startsWith('/* log-follower */'))
      .map(
        (r) =>
          `- ${r.mode}: the longest statement overall (${fmt(r.longest.all.ms)} ms) was a log follower's: ${fmt(N)} \`message.deleted\` arrive in the log at thousands a second, and the realtime, webhook and push relays read them in batches.`,
      ),
  ].join('\n');
}

async function main(): Promise<void> {
  log(`machine: ${machine()}; ${fmt(N)} messages per erased user`);
  const storage = await freshStorage('postgres');
  const pg = new Client({ connectionString: storage.env.DATABASE_URL });
  let server: Server | undefined;
  try {
    // Ana's probe sends 4 a second: above the default per-user rate limit
    server = await startServer(storage, {
      SERVICE_ROLE: 'api',
      LOG_LEVEL: 'warn',
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    });
    await pg.connect();
    const pgVersion = (await pg.query<{ server_version: string }>('SHOW server_version')).rows[0]!
      .server_version;
    const ws = (await must(server.baseUrl, 'GET', '/v1/workspace')).id as string;
    const users: Record<string, string> = {};
    for (const u of ['ana', 'bo', 'di', 'cy'])
      users[u] = (await must(server.baseUrl, 'PUT', `/v1/users/${u}`, { name: u })).id;
    const channelIds: string[] = [];
    for (let c = 0; c < CHANNELS; c++) {
      const ch = await must(server.baseUrl, 'POST', '/v1/channels', {
        type: 'group',
        external_id: `erasure-${c}`,
        name: `Erasure ${c}`,
        created_by: 'ana',
        member_external_ids: ['bo', 'di', 'cy'],
      });
      channelIds.push(ch.id as string);
    }
    log(`seeding ${fmt(2 * N + N / 10)} messages into ${CHANNELS} channels (PostgreSQL ${pgVersion}) ...`);
    const seedS = await seed(pg, ws, channelIds, users);
    const size = (
      await pg.query<{ heap: string }>(`SELECT pg_size_pretty(pg_total_relation_size('messages')) AS heap`)
    ).rows[0]!.heap;
    log(`seeded in ${seedS.toFixed(0)} s; messages with indexes: ${size}`);

    const runs = [
      await erase(storage, server, pg, 'anonymize', 'bo', users.bo!, channelIds[3]!),
      await erase(storage, server, pg, 'delete', 'di', users.di!, channelIds[3]!),
    ];
    const table = [
      "| mode | DELETE answered 202 in | erasure done in | messages/s | longest transaction: any / not a log follower / holding a channel's lock | Ana's sends meanwhile: p50 / p99 / max | worker peak RSS (idle before) | worker heap used: peak / low in the 2nd half | /proc/loadavg before → after |",
      '|---|---:|---:|---:|---:|---|---:|---:|---|',
      ...runs.map(
        (r) =>
          `| ${r.mode} | ${fmt(r.requestMs)} ms | ${fmt(r.totalS, 1)} s | ${fmt(r.messagesDone / r.totalS)} | ${fmt(r.longest.all.ms)} / ${fmt(r.longest.other.ms)} / ${fmt(r.longest.locked.ms)} ms | ${fmt(r.sendP50, 1)} / ${fmt(r.sendP99, 1)} / ${fmt(r.sendMax, 1)} ms (${r.sends} sends${r.sendFailures.length ? `, ${r.sendFailures.length} failed: ${[...new Set(r.sendFailures)].join(', ')}` : ''}) | ${fmt(r.workerPeakMiB, 1)} MiB (${fmt(r.workerIdleMiB, 1)}) | ${fmt(r.heapPeakMiB, 1)} / ${fmt(r.heapLowMiB, 1)} MiB | ${r.loadBefore} → ${r.loadAfter} |`,
      ),
    ].join('\n');
    const body = `Command: \`npm run bench:erasure\` (builds dist/ if it is stale, then \`npx ts-node --transpile-only bench/erasure.ts\`). Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${machine()}; PostgreSQL ${pgVersion} + Redis, load average ${loadAverage()} at the end (**shared with other work**: the numbers are noisy).

A database of its own: ${CHANNELS} group channels; \`bo\` and \`di\` wrote ${fmt(N)} messages each, spread over the channels, Ana ${fmt(N / 10)} between them (seeded with one INSERT … SELECT generate_series in ${fmt(seedS)} s, inbox counters computed in it, search documents (message_search) written and indexed after; ${size} with indexes); each of Bo and Di reacted to ${fmt(REACTIONS)} of Ana's messages and is mentioned in ${fmt(REACTIONS)}. An API instance (\`SERVICE_ROLE=api\`) answers \`DELETE /v1/users/bo?messages=anonymize\`, then \`DELETE /v1/users/di?messages=delete\`, with 202; a worker instance (\`SERVICE_ROLE=worker\`, started fresh for each run) runs the \`user.erase\` job through BullMQ in batches of 500 messages of one channel (SERVICE_ERASURE_BATCH_SIZE), then the reactions and mentions, then the user row. "Erasure done" is until \`GET /v1/erasures/:id\` says \`done\` (polled every 0.5 s). The longest transaction is the largest \`clock_timestamp() - xact_start\` of any client backend of the database, sampled every 10 ms (${fmt(runs[0]!.samples)} and ${fmt(runs[1]!.samples)} samples), shown for all of them and for all but the service's log followers (the realtime, webhook and push relays, which read the log in one statement each and here have a million new events to read): the latter are the request's transaction, every batch of the erasure, the sends and the polls. Meanwhile a backend sends as Ana into one of the channels every 250 ms (REST, \`POST /v1/channels/:id/messages\`): a batch holds that channel's write lock for its own statements only, so a send waits at most one batch. Peak RSS is the worker's \`VmHWM\` from \`/proc/<pid>/status\`; its heap in use is read from \`GET /metrics\` every 2 s (the peak includes garbage V8 had not collected yet; the low of the run's second half is what stays after major collections).

${table}

The longest transactions were running: ${runs
      .map(
        (r) =>
          `${r.mode}: \`${quoted(r.longest.all.query)}\`; apart from the log followers \`${quoted(r.longest.other.query)}\`; holding a channel's lock \`${quoted(r.longest.locked.query)}\``,
      )
      .join('. ')}.

Reading:

${reading(runs)}

After each run: ${runs.map((r) => `${r.mode}: ${r.check}`).join('; ')}.
`;
    const file = writeBenchmarkSection('Data rights: erasure', body);
    process.stdout.write(`\n${body}\nwritten to ${file}\n`);
  } finally {
    await pg.end().catch(() => undefined);
    await server?.stop();
    await storage.drop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
