import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { rows } from '../infra/database/sql';

/** CONTRACT §20's `messages` modes of `DELETE /v1/users/:external_id`. */
export const ERASURE_MODES = ['keep', 'anonymize', 'delete'] as const;
export type ErasureMode = (typeof ERASURE_MODES)[number];

/** A row of `user_erasures` (migration 1763691030000). */
export interface ErasureRow {
  id: string;
  workspace_id: string;
  user_id: string;
  mode: ErasureMode;
  status: 'pending' | 'done';
  messages_done: string;
  cursor_channel: string | null;
  /** The exact created_at (microseconds) of the last message the walk passed. */
  cursor_at: string | null;
  attempts: number;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** The next messages of the walk: one channel's, newest first. */
export interface MessageBatch {
  channelId: string;
  ids: string[];
  /** Where the walk stands once they are done (the last one's position). */
  cursorAt: string;
}

const COLUMNS = `id, workspace_id, user_id, mode, status, messages_done::text AS messages_done, cursor_channel,
  to_char(cursor_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at, attempts, created_at, updated_at, finished_at`;

/**
 * The SQL of user erasure (CONTRACT §20): what goes at once with the request, the batches of the job
 * and the erasures' own rows. Every statement names the user by id: the row being erased has no
 * external id any more, and a new user may hold the old one.
 */
@Injectable()
export class ErasureRepository {
  constructor(private readonly db: DataSource) {}

  /** The user to erase, by the external id the request names (an erased user has none). */
  async findUser(
    m: EntityManager,
    workspaceId: string,
    externalId: string,
  ): Promise<{ id: string; external_id: string; name: string | null } | null> {
    const found = await rows<{ id: string; external_id: string; name: string | null }>(
      m,
      `SELECT id, external_id, name FROM users WHERE workspace_id = $1 AND external_id = $2`,
      [workspaceId, externalId],
    );
    return found[0] ?? null;
  }

  /**
   * What goes at once, in the request's transaction (after the user left their channels): devices,
   * scheduled messages (never sent), blocks either way, mute and bans (their `banned_by` marks and pins' `pinned_by` go null); then the
   * row becomes the anonymous placeholder: no external id (no lookup finds it, the external id is free
   * again), no name, avatar or metadata. False when another request erased the user meanwhile.
   */
  async detach(m: EntityManager, workspaceId: string, userId: string): Promise<boolean> {
    await m.query(`DELETE FROM devices WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, userId]);
    await m.query(`DELETE FROM scheduled_messages WHERE user_id = $1`, [userId]);
    await m.query(`DELETE FROM blocks WHERE blocker_id = $1`, [userId]);
    await m.query(`DELETE FROM blocks WHERE blocked_id = $1`, [userId]);
    await m.query(`DELETE FROM mutes WHERE user_id = $1`, [userId]);
    await m.query(`DELETE FROM bans WHERE user_id = $1`, [userId]);
    await m.query(`UPDATE bans SET banned_by = NULL WHERE banned_by = $1`, [userId]);
    await m.query(`UPDATE message_pins SET pinned_by = NULL WHERE pinned_by = $1`, [userId]);
    const placeholder = await rows<{ id: string }>(
      m,
      `UPDATE users SET external_id = NULL, name = NULL, avatar_url = NULL, metadata = '{}'::jsonb, updated_at = now()
        WHERE workspace_id = $1 AND id = $2 AND external_id IS NOT NULL
       RETURNING id`,
      [workspaceId, userId],
    );
    return placeholder.length > 0;
  }

  /** The user's messages, counted up to `limit + 1` (enough to tell "more than limit"). */
  async countMessages(m: EntityManager, userId: string, limit: number): Promise<number> {
    const found = await rows<{ n: number }>(
      m,
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM messages WHERE user_id = $1 LIMIT $2) x`,
      [userId, limit + 1],
    );
    return found[0]!.n;
  }

  async create(m: EntityManager, workspaceId: string, userId: string, mode: ErasureMode): Promise<string> {
    const id = newId();
    await m.query(`INSERT INTO user_erasures (id, workspace_id, user_id, mode) VALUES ($1, $2, $3, $4)`, [
      id,
      workspaceId,
      userId,
      mode,
    ]);
    return id;
  }

  async get(id: string): Promise<ErasureRow | null> {
    const found = await rows<ErasureRow>(
      this.db.manager,
      `SELECT ${COLUMNS} FROM user_erasures WHERE id = $1`,
      [id],
    );
    return found[0] ?? null;
  }

  async find(workspaceId: string, id: string): Promise<ErasureRow | null> {
    const found = await rows<ErasureRow>(
      this.db.manager,
      `SELECT ${COLUMNS} FROM user_erasures WHERE workspace_id = $1 AND id = $2`,
      [workspaceId, id],
    );
    return found[0] ?? null;
  }

  /**
   * The next batch of the walk over the user's messages (`messages_user_channel`, newest first by
   * channel): from the cursor on, inclusive of its instant (two messages of a channel may share one;
   * those already erased are no longer the user's and drop out), at most `size`, of one channel.
   * `cursor` null starts at the top. Plain reads: the batch's transaction re-checks them under locks.
   */
  async nextBatch(
    userId: string,
    cursor: { channelId: string; at: string } | null,
    size: number,
  ): Promise<MessageBatch | null> {
    const found = await rows<{ id: string; channel_id: string; created_key: string }>(
      this.db.manager,
      `SELECT m.id, m.channel_id, to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
         FROM messages m
        WHERE m.user_id = $1 AND ($2::uuid IS NULL OR (m.channel_id, m.created_at) <= ($2::uuid, $3::timestamptz))
        ORDER BY m.channel_id DESC, m.created_at DESC
        LIMIT $4`,
      [userId, cursor?.channelId ?? null, cursor?.at ?? null, size],
    );
    const first = found[0];
    if (!first) return null;
    const mine = found.filter((r) => r.channel_id === first.channel_id);
    return {
      channelId: first.channel_id,
      ids: mine.map((r) => r.id),
      cursorAt: mine[mine.length - 1]!.created_key,
    };
  }

  /**
   * Of these messages, those still the user's, locked for the batch (after the channel's lock, if any;
   * FOR UPDATE when they are to be removed).
   */
  async lockMine(m: EntityManager, userId: string, ids: string[], removing: boolean): Promise<string[]> {
    const found = await rows<{ id: string }>(
      m,
      `SELECT id FROM messages WHERE id = ANY($1::uuid[]) AND user_id = $2 ORDER BY id FOR ${removing ? 'UPDATE' : 'NO KEY UPDATE'}`,
      [ids, userId],
    );
    return found.map((r) => r.id);
  }

  /**
   * The user is no longer a participant of the threads these messages reply in (their participants
   * are authors; the list is capped at 10, and a departed author should not hold a place in it).
   */
  async leaveThreads(m: EntityManager, userId: string, ids: string[]): Promise<void> {
    await m.query(
      `UPDATE message_threads t SET participants = array_remove(t.participants, $1::uuid)
        WHERE t.root_id IN (SELECT DISTINCT thread_id FROM messages WHERE id = ANY($2::uuid[]) AND thread_id IS NOT NULL)
          AND $1::uuid = ANY (t.participants)`,
      [userId, ids],
    );
  }

  /** The messages are no longer the user's (`user: null`): what `messages=keep` does to each. */
  async forgetAuthor(m: EntityManager, userId: string, ids: string[]): Promise<void> {
    if (!ids.length) return;
    await m.query(`UPDATE messages SET user_id = NULL WHERE id = ANY($1::uuid[]) AND user_id = $2`, [
      ids,
      userId,
    ]);
  }

  /** Records a batch in the erasure's row, in the batch's transaction: progress and where the walk stands. */
  async advance(
    m: EntityManager,
    id: string,
    done: number,
    cursor: { channelId: string; at: string },
  ): Promise<void> {
    await m.query(
      `UPDATE user_erasures SET messages_done = messages_done + $2, cursor_channel = $3, cursor_at = $4::timestamptz,
              updated_at = now()
        WHERE id = $1`,
      [id, done, cursor.channelId, cursor.at],
    );
  }

  /**
   * One batch of the rest, each its own short transaction; answers how many rows it changed (0: done).
   * Reactions the user gave and mentions of the user go, silently as they always went with a deleted
   * user (a cascade); the user's uploads stay, without their uploader.
   */
  async deleteReactions(userId: string, size: number): Promise<number> {
    return this.count(
      `WITH d AS (DELETE FROM reactions r USING (SELECT message_id FROM reactions WHERE user_id = $1 LIMIT $2) x
                   WHERE r.message_id = x.message_id AND r.user_id = $1 RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [userId, size],
    );
  }

  async deleteMentions(userId: string, size: number): Promise<number> {
    return this.count(
      `WITH d AS (DELETE FROM message_mentions mm USING (SELECT message_id FROM message_mentions WHERE user_id = $1 LIMIT $2) x
                   WHERE mm.message_id = x.message_id AND mm.user_id = $1 RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [userId, size],
    );
  }

  async forgetUploads(userId: string, size: number): Promise<number> {
    return this.count(
      `WITH u AS (UPDATE attachment_uploads a SET user_id = NULL
                    FROM (SELECT key FROM attachment_uploads WHERE user_id = $1 LIMIT $2) x
                   WHERE a.key = x.key RETURNING 1)
       SELECT count(*)::int AS n FROM u`,
      [userId, size],
    );
  }

  /**
   * The last step, one transaction: the placeholder row goes and the erasure is done. Its foreign keys
   * find nothing large left to change (the channels it created are set null, its few remaining rows
   * cascade), but they look through the indexes of messages, reactions and mentions, which keep the
   * entries of the rows the batches changed until vacuum: about a second for a million messages.
   */
  async finish(id: string, userId: string): Promise<void> {
    await this.db.transaction(async (m) => {
      // CONTRACT §28's counters stay exact: the user's poll votes are withdrawn with them (no event)
      await m.query(
        `WITH mine AS (DELETE FROM poll_votes WHERE user_id = $1 RETURNING poll_id, option_id),
              options AS (UPDATE poll_options o SET vote_count = o.vote_count - d.n
                            FROM (SELECT option_id, count(*)::int AS n FROM mine GROUP BY option_id) d
                           WHERE o.id = d.option_id)
         UPDATE polls p SET total_votes = p.total_votes - d.n, voter_count = p.voter_count - 1
           FROM (SELECT poll_id, count(*)::int AS n FROM mine GROUP BY poll_id) d
          WHERE p.id = d.poll_id`,
        [userId],
      );
      await m.query(`DELETE FROM users WHERE id = $1 AND external_id IS NULL`, [userId]);
      await m.query(
        `UPDATE user_erasures SET status = 'done', finished_at = now(), updated_at = now(), last_error = NULL WHERE id = $1`,
        [id],
      );
    });
  }

  async failed(id: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE user_erasures SET attempts = attempts + 1, last_error = left($2, 1000), updated_at = now() WHERE id = $1`,
      [id, error],
    );
  }

  /** Pending erasures nobody has advanced for `graceMs` (their job was lost): the sweeper's. */
  async stalled(graceMs: number, limit: number): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db.manager,
      `SELECT id FROM user_erasures WHERE status = 'pending' AND updated_at < now() - make_interval(secs => $1::float8 / 1000)
        ORDER BY updated_at LIMIT $2`,
      [graceMs, limit],
    );
    return found.map((r) => r.id);
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    const found = await rows<{ n: number }>(this.db.manager, sql, params);
    return found[0]?.n ?? 0;
  }
}
