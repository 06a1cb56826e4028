import type { Instant } from '../common/rfc3339';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { QuotedMessagePayload, ThreadCounters } from '../contract/events';
import { iso } from '../common/time';
import { exactTime, rows } from '../infra/database/sql';
import { QUOTE_MAX_CODE_POINTS, sourceParam, threadParticipantsJson } from './message-view.service';
import type { MessageSource } from './message-view.service';
import { hiddenFrom } from './visibility';

/** A parent message: its channel and the quote a reply to it carries. */
export interface ParentRow {
  channel_id: string;
  quote: QuotedMessagePayload;
}

/** A history row: the id and the exact sort key (microseconds) for the next cursor. */
export interface PageRow {
  id: string;
  created_key: string;
}

export type HistoryBound =
  | { kind: 'newest' }
  | { kind: 'before'; createdKey: string; id: string }
  | { kind: 'after'; createdKey: string; id: string }
  | { kind: 'after-time'; time: Instant };

@Injectable()
export class MessagesRepository {
  /**
   * A message of this workspace as a reply quotes it (for parent validation and the reply's
   * quoted_message); null when there is none.
   */
  async parent(m: EntityManager, workspaceId: string, id: string): Promise<ParentRow | null> {
    const rows: (Omit<ParentRow, 'quote'> & {
      p_id: string;
      p_user_id: string | null;
      p_user_name: string | null;
      p_content: string;
      p_type: string;
      p_deleted: boolean;
    })[] = await m.query(
      `SELECT p.channel_id, p.id AS p_id, pu.id AS p_user_id, pu.name AS p_user_name,
              left(p.content, ${QUOTE_MAX_CODE_POINTS}) AS p_content, p.type AS p_type, p.deleted_at IS NOT NULL AS p_deleted
         FROM messages p LEFT JOIN users pu ON pu.id = p.user_id AND pu.external_id IS NOT NULL
        WHERE p.workspace_id = $1 AND p.id = $2`,
      [workspaceId, id],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      channel_id: r.channel_id,
      quote: {
        id: r.p_id,
        user_id: r.p_user_id,
        user_name: r.p_user_name,
        content: r.p_deleted ? '' : r.p_content,
        type: r.p_type,
        deleted: r.p_deleted,
      },
    };
  }

  /** A message of this workspace named as a thread root: its channel and whether it is itself a reply. */
  async threadRoot(
    m: EntityManager,
    workspaceId: string,
    id: string,
  ): Promise<{ channel_id: string; thread_id: string | null } | null> {
    const rows: { channel_id: string; thread_id: string | null }[] = await m.query(
      `SELECT channel_id, thread_id FROM messages WHERE workspace_id = $1 AND id = $2`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Replies of these roots were unsent or removed (in the channel's write session): `n` live replies
   * fewer each, and the last reply is the newest live one (or none). A shadowed reply was never counted
   * (chat_send_message), so it is left out of `n` and of `last_reply_at` by the caller and here.
   * Participants stay: they are the authors who replied. Answers the new counters per root that has a
   * thread row.
   */
  async repliesUnsent(m: EntityManager, removed: Map<string, number>): Promise<Map<string, ThreadCounters>> {
    if (!removed.size) return new Map();
    const found = await rows<{
      root_id: string;
      reply_count: number;
      last_reply_at: Date | null;
      thread_participants: ThreadCounters['thread_participants'] | null;
    }>(
      m,
      `WITH d AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS d(root_id, n)),
       t AS (
           UPDATE message_threads t
              SET reply_count = greatest(t.reply_count - d.n, 0),
                  last_reply_at = (SELECT r.created_at FROM messages r
                                    WHERE r.thread_id = t.root_id AND r.deleted_at IS NULL AND NOT r.shadowed
                                    ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
             FROM d WHERE t.root_id = d.root_id
           RETURNING t.root_id, t.reply_count, t.last_reply_at, t.participants)
         SELECT t.root_id, t.reply_count, t.last_reply_at, ${threadParticipantsJson('t.participants')} AS thread_participants
           FROM t`,
      [[...removed.keys()], [...removed.values()]],
    );
    return new Map(
      found.map((r) => [
        r.root_id,
        {
          reply_count: r.reply_count,
          last_reply_at: iso(r.last_reply_at),
          thread_participants: r.thread_participants ?? [],
        },
      ]),
    );
  }

  /**
   * New content, and new metadata when given ({} clears it). The search document is rewritten in the
   * same statement (message_search, migration 1763691090000): the indexer only fills in missing ones.
   */
  /**
   * The new content (null: kept) and metadata (undefined: kept), its search document, and the link
   * previews of the URLs the new content still has (`urls`, CONTRACT §26: the others go at once; new
   * ones are the worker's, fetched under the address policy of the instance that took the edit,
   * `allowPrivate`).
   */
  async edit(
    m: EntityManager,
    id: string,
    content: string | null,
    urls: string[] | null,
    allowPrivate: boolean,
    metadata?: Record<string, unknown>,
  ): Promise<void> {
    await m.query(
      `WITH edited AS (
         UPDATE messages SET content = coalesce($2::text, content), edited_at = clock_timestamp(),
                metadata = CASE WHEN $3 THEN nullif($4::jsonb, '{}'::jsonb) ELSE metadata END,
                previews = CASE WHEN $5::text[] IS NULL OR previews = '[]'::jsonb THEN previews ELSE
                             (SELECT coalesce(jsonb_agg(p.v ORDER BY array_position($5::text[], p.v->>'url'), p.i), '[]'::jsonb)
                                FROM jsonb_array_elements(previews) WITH ORDINALITY AS p(v, i)
                               WHERE p.v->>'url' = ANY($5::text[])) END,
                previews_allow_private = CASE WHEN $2::text IS NULL THEN previews_allow_private ELSE $6 END
          WHERE id = $1
         RETURNING id, content, channel_id, deleted_at)
       INSERT INTO message_search (message_id, channel_id, doc)
       SELECT id, channel_id, chat_search_doc(content, channel_id) FROM edited WHERE deleted_at IS NULL
       ON CONFLICT (message_id) DO UPDATE SET doc = excluded.doc`,
      [
        id,
        content,
        metadata !== undefined,
        metadata === undefined ? null : JSON.stringify(metadata),
        urls,
        allowPrivate,
      ],
    );
  }

  /**
   * CONTRACT §26: how a new message's links are previewed, when not as the columns' defaults say: not at
   * all (`skip_previews`), or on private networks too (the instance that took it allows them).
   */
  async previewPolicy(
    m: EntityManager,
    id: string,
    p: { skip: boolean; allowPrivate: boolean },
  ): Promise<void> {
    await m.query(`UPDATE messages SET skip_previews = $2, previews_allow_private = $3 WHERE id = $1`, [
      id,
      p.skip,
      p.allowPrivate,
    ]);
  }

  /**
   * Blanks content, attachment, metadata, link previews and a poll and stamps deleted_at; `forgetAuthor` also clears user_id
   * (an erasure's anonymize, in the same row version). The search document becomes NULL in the same
   * statement (a row is written if the indexer had not reached the message, so it cannot index the old
   * text later). Answers each message's deleted_at.
   */
  async unsend(m: EntityManager, ids: string[], forgetAuthor = false): Promise<Map<string, Date>> {
    if (!ids.length) return new Map();
    const found = await rows<{ id: string; deleted_at: Date }>(
      m,
      `WITH unsent AS (
         UPDATE messages SET content = '', attachment_url = NULL, attachment = NULL, metadata = NULL, previews = '[]',
                deleted_at = clock_timestamp(), user_id = CASE WHEN $2 THEN NULL ELSE user_id END
          WHERE id = ANY($1::uuid[])
         RETURNING id, channel_id, deleted_at),
       unindexed AS (
         INSERT INTO message_search (message_id, channel_id, doc) SELECT id, channel_id, NULL FROM unsent
         ON CONFLICT (message_id) DO UPDATE SET doc = NULL),
       -- CONTRACT §28: an unsent poll is blanked (closed without an event), its votes dropped
       unpolled AS (
         UPDATE polls p SET closed_at = coalesce(p.closed_at, clock_timestamp()), total_votes = 0, voter_count = 0
           FROM unsent WHERE p.message_id = unsent.id RETURNING p.id),
       unvoted AS (DELETE FROM poll_votes v USING unpolled WHERE v.poll_id = unpolled.id),
       uncounted AS (UPDATE poll_options o SET vote_count = 0 FROM unpolled WHERE o.poll_id = unpolled.id)
       SELECT id, deleted_at FROM unsent`,
      [ids, forgetAuthor],
    );
    return new Map(found.map((r) => [r.id, r.deleted_at]));
  }

  /**
   * One history page (limit + 1 rows, to tell whether there is more) as a source for
   * MessageViews.rows: newest first by (created_at, id), or oldest first for the `after` forms.
   * Messages of users the viewer ($2 of the rendering statement) blocks are left out.
   */
  pageSource(channelId: string, bound: HistoryBound, limit: number): MessageSource {
    // the channel was found in the workspace; the rendering statement checks the workspace of every row
    // again, and a workspace condition here would steer the planner off the (channel_id, created_at) index
    return keysetSource(
      (arg) => [
        `msg.channel_id = ${arg(channelId, 'uuid')}`,
        'msg.show_in_channel IS NOT FALSE', // thread-only replies are not in the channel (messages_channel_time's predicate)
      ],
      bound,
      limit,
      'DESC',
    );
  }

  /**
   * One page of a thread's replies (CONTRACT §15), through `messages_thread`: oldest first from the start
   * of the thread, `after` a reply onwards, or the replies just `before` one (newest first here; the
   * service shows them oldest first). Blocked authors are left out like in history.
   */
  replySource(rootId: string, bound: HistoryBound, limit: number): MessageSource {
    return keysetSource((arg) => [`msg.thread_id = ${arg(rootId, 'uuid')}`], bound, limit, 'ASC');
  }
}

/**
 * The LIMIT of a page source that MessageViews renders (limit + 1 rows), written into the statement's
 * text rather than passed as a parameter: with `LIMIT $n` the generic plan assumes a tenth of the table
 * and hash-joins all of `messages`, so PostgreSQL kept re-planning the rendering statement on every call
 * (about 3 ms of planning for 1.5 ms of execution); with the literal, the cached generic plan is the
 * index nested loop. Page sizes are validated integers (1-100), so that is at most 100 texts per source.
 */
export function pageTake(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`bad page size ${limit}`);
  return limit + 1;
}

/**
 * limit + 1 rows of a keyset over (created_at, id) as a source for MessageViews.rows; `$1` (workspace)
 * and `$2` (viewer) belong to the rendering statement, and the scope's and the bound's values are
 * sourceParams (numbered from $3, hidden from the planner's estimates). Without a
 * bound the page starts at the `start` end; `before` reads newest first, the `after` forms oldest first.
 */
function keysetSource(
  scope: (arg: (value: unknown, type: 'uuid' | 'timestamptz') => string) => string[],
  bound: HistoryBound,
  limit: number,
  start: 'ASC' | 'DESC',
): MessageSource {
  const params: unknown[] = [];
  const arg = (value: unknown, type: 'uuid' | 'timestamptz') => sourceParam(params, value, type);
  const where = [...scope(arg), `NOT ${hiddenFrom('msg', '$2::uuid')}`];
  let order = start;
  switch (bound.kind) {
    case 'newest':
      break;
    case 'before':
      where.push(
        `(msg.created_at, msg.id) < (${arg(bound.createdKey, 'timestamptz')}, ${arg(bound.id, 'uuid')})`,
      );
      order = 'DESC';
      break;
    case 'after':
      where.push(
        `(msg.created_at, msg.id) > (${arg(bound.createdKey, 'timestamptz')}, ${arg(bound.id, 'uuid')})`,
      );
      order = 'ASC';
      break;
    case 'after-time':
      // CONTRACT §21: later than the time as shown, at millisecond precision. A message whose created_at
      // prints as that millisecond is left out (created_at keeps microseconds), so the bound is the next
      // millisecond; a plain range on created_at keeps the index scan.
      where.push(
        `msg.created_at >= ${arg(toMillisecond(bound.time), 'timestamptz')} + interval '1 millisecond'`,
      );
      order = 'ASC';
      break;
  }
  const take = pageTake(limit);
  return {
    sql: `SELECT msg.id, row_number() OVER (ORDER BY msg.created_at ${order}, msg.id ${order}) AS ord, ${exactTime('msg.created_at')} AS created_key
            FROM (SELECT msg.id, msg.created_at FROM messages msg
                   WHERE ${where.join(' AND ')}
                   ORDER BY msg.created_at ${order}, msg.id ${order}
                   LIMIT ${take}) msg`,
    params,
  };
}

/** The instant cut to its millisecond (`…T10:00:00.123456Z` → `…T10:00:00.123Z`), as the API prints times. */
function toMillisecond(time: Instant): string {
  return `${time.utc.slice(0, 23)}Z`;
}
