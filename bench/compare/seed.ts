/**
 * The data the read benchmarks (bench/compare.ts, bench/ab-reads.ts) seed with SQL, the same for every
 * build they measure: a long channel's history, an inbox of many channels, and the threads a reader
 * takes part in (CONTRACT §23's read state, where the schema has it).
 */
import { INBOX_COUNTER_BACKFILL } from '../../src/database/migrations/1763690820000-inbox-counters';
import { pgQuery } from './infra';

/** `n` messages by `writer` (an external id) into `channel`, 100 ms apart up to now, with the inbox counters. */
export async function seedHistoryChannel(
  url: string,
  channel: string,
  writer: string,
  n: number,
): Promise<void> {
  await pgQuery(
    url,
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
     SELECT gen_random_uuid(), c.workspace_id, c.id, u.id, u.id::text, 'text', 'message number ' || g,
            now() - make_interval(secs => ($2 - g) / 10.0)
       FROM channels c, users u, generate_series(1, $2) g
      WHERE c.id = $1 AND u.external_id = $3 AND u.workspace_id = c.workspace_id`,
    [channel, n, writer],
  );
  await pgQuery(url, `UPDATE channels SET last_message_at = now() WHERE id = $1`, [channel]);
  for (const sql of INBOX_COUNTER_BACKFILL) await pgQuery(url, sql);
}

/**
 * `channels` group channels (external ids `<t>-<k>`, `t` of three dash-separated parts as
 * bench/compare's tags are: `k` is read back as the fourth) of `reader` and `writer` with `messages` messages
 * each by the writer; the reader has read every message of the even ones and half of the odd ones; with
 * `threadsPerChannel`, that many threads per channel the reader takes part in (seedReadThreads).
 */
export async function seedInbox(
  url: string,
  t: string,
  reader: string,
  writer: string,
  channels: number,
  messages: number,
  threadsPerChannel: number,
): Promise<void> {
  const [C, M] = [channels, messages];
  await pgQuery(
    url,
    `INSERT INTO channels (id, workspace_id, type, external_id, name, created_at)
     SELECT gen_random_uuid(), u.workspace_id, 'group', $2 || '-' || g, 'Inbox ' || g, now() - interval '1 day'
       FROM users u, generate_series(1, $1) g WHERE u.external_id = $3`,
    [C, t, reader],
  );
  // messages at now() - 1 day + g*10 s + k; the reader has read all of channel k when k is even, half when odd
  await pgQuery(
    url,
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
     SELECT gen_random_uuid(), c.workspace_id, c.id, w.id, w.id::text, 'text', 'inbox message ' || g,
            now() - interval '1 day' + make_interval(secs => g * 10 + split_part(c.external_id, '-', 4)::int * 0.001)
       FROM channels c JOIN users w ON w.workspace_id = c.workspace_id AND w.external_id = $3, generate_series(1, $2) g
      WHERE c.external_id LIKE $1 || '-%'`,
    [t, M, writer],
  );
  await pgQuery(
    url,
    `INSERT INTO channel_members (channel_id, user_id, workspace_id, role, joined_at, last_read_at, last_delivered_at)
     SELECT c.id, u.id, c.workspace_id, 'member', now() - interval '1 day',
            CASE WHEN u.external_id = $4 OR split_part(c.external_id, '-', 4)::int % 2 = 0 THEN now()
                 ELSE now() - interval '1 day' + make_interval(secs => ($2 / 2) * 10 + 1) END,
            now()
       FROM channels c JOIN users u ON u.workspace_id = c.workspace_id AND u.external_id IN ($3, $4)
      WHERE c.external_id LIKE $1 || '-%'`,
    [t, M, reader, writer],
  );
  await pgQuery(
    url,
    `UPDATE channels c SET last_message_at = (SELECT max(created_at) FROM messages m WHERE m.channel_id = c.id) WHERE c.external_id LIKE $1 || '-%'`,
    [t],
  );
  for (const sql of INBOX_COUNTER_BACKFILL) await pgQuery(url, sql);
  if (threadsPerChannel > 0) {
    const ids = await pgQuery(url, `SELECT id FROM channels WHERE external_id LIKE $1 || '-%'`, [t]);
    await seedReadThreads(
      url,
      ids.map((r) => String(r.id)),
      threadsPerChannel,
      reader,
      writer,
    );
  }
}

export const READ_THREADS_NOTE = (which: string) =>
  `thread read state (CONTRACT §23): ${which} each start a thread of 5 thread-only replies by the writer (1-5 ms after the root), the reader takes part in each with a cursor after the second reply (3 unread); on a schema without thread read state (a build before it) the same replies and counters are seeded without the ordinals and cursors.`;

/**
 * Gives the newest `perChannel` messages of each channel a thread of 5 thread-only replies by `writer`
 * (1-5 ms after the root) and, where the schema has CONTRACT §23's thread read state, the ordinals and a
 * cursor of `reader` after the second reply (with its kept count of 3 where the schema keeps one), as
 * chat_send_message and a thread unread would leave them.
 */
export async function seedReadThreads(
  url: string,
  channels: string[],
  perChannel: number,
  reader: string,
  writer: string,
): Promise<void> {
  const [schema] = await pgQuery(
    url,
    `SELECT to_regclass('thread_reads') IS NOT NULL AS has,
            EXISTS (SELECT 1 FROM information_schema.columns
                     WHERE table_name = 'thread_reads' AND column_name = 'unread_replies') AS kept`,
  );
  const has = schema?.has === true;
  const kept = schema?.kept === true;
  await pgQuery(
    url,
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at, thread_id,
                           show_in_channel${has ? ', thread_no' : ''})
     SELECT gen_random_uuid(), r.workspace_id, r.channel_id, w.id, w.id::text, 'text', 'thread reply ' || i,
            r.created_at + make_interval(secs => i / 1000.0), r.id, false${has ? ', i' : ''}
       FROM unnest($1::uuid[]) AS c(id)
       CROSS JOIN LATERAL (SELECT m.id, m.channel_id, m.workspace_id, m.created_at FROM messages m
                            WHERE m.channel_id = c.id AND m.thread_id IS NULL ORDER BY m.created_at DESC LIMIT $2) r
       JOIN users w ON w.workspace_id = r.workspace_id AND w.external_id = $3, generate_series(1, 5) i`,
    [channels, perChannel, writer],
  );
  await pgQuery(
    url,
    `INSERT INTO message_threads (root_id, channel_id, reply_count, last_reply_at, participants${has ? ', reply_no' : ''})
     SELECT thread_id, channel_id, count(*), max(created_at), array_agg(DISTINCT user_id)${has ? ', count(*)' : ''}
       FROM messages WHERE channel_id = ANY($1::uuid[]) AND thread_id IS NOT NULL GROUP BY thread_id, channel_id`,
    [channels],
  );
  if (!has) return;
  await pgQuery(
    url,
    `INSERT INTO thread_reads (root_id, user_id, channel_id, participant, read_at, read_id${kept ? ', unread_replies' : ''})
     SELECT t.root_id, u.id, t.channel_id, true, root.created_at + interval '2 milliseconds', 'ffffffff-ffff-ffff-ffff-ffffffffffff'${kept ? ', 3' : ''}
       FROM message_threads t JOIN messages root ON root.id = t.root_id
       JOIN users u ON u.workspace_id = root.workspace_id AND u.external_id = $2
      WHERE t.channel_id = ANY($1::uuid[])`,
    [channels, reader],
  );
  await pgQuery(url, 'VACUUM ANALYZE thread_reads');
}
