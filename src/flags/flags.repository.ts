import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { isoNotNull } from '../common/time';
import { EventLogService } from '../events/event-log.service';
import type { FlagPayload, UserRef } from '../contract/events';
import { exactTime, rows } from '../infra/database/sql';
import type { ReviewAction } from '../moderation/moderation-audit.repository';

/** What is flagged: a message (with its author, the user a ban would hit) or a user. */
export type FlagTarget =
  { type: 'message'; messageId: string; authorId: string | null } | { type: 'user'; userId: string };

export interface NewFlag {
  workspaceId: string;
  target: FlagTarget;
  /** The reporter; null for automatic moderation. */
  byUser: UserRef | null;
  reason: string | null;
}

/** A flag as POST /v1/messages/:id/flag and /v1/users/:external_id/flag answer it. */
export interface FlagView {
  id: string;
  target_type: 'message' | 'user';
  /** Message flags only. */
  message_id?: string;
  /** The flagged user, or the message's author (null once the author was deleted). */
  user_id: string | null;
  by_user: UserRef | null;
  reason: string | null;
  created_at: string;
}

export type ReviewStatus = 'open' | 'resolved';

/** A review entry's row with what its page shows of the target (the message is rendered separately). */
export interface ReviewRow {
  id: string;
  target_type: 'message' | 'user';
  message_id: string | null;
  target_user_id: string | null;
  status: ReviewStatus;
  flag_count: number;
  first_flagged_at: Date;
  last_flagged_at: Date;
  resolved_at: Date | null;
  /** resolved_at as exact text, for the resolved page's cursor. */
  resolved_key: string | null;
  resolution_action: ReviewAction | null;
  resolution_duration_seconds: number | null;
  reasons: string[] | null;
  u_id: string | null;
  u_external_id: string | null;
  u_name: string | null;
  u_avatar_url: string | null;
  u_metadata: Record<string, unknown> | null;
  u_created_at: Date | null;
  u_updated_at: Date | null;
}

/** An open entry locked for its resolution, with what the resolution acts on and audits. */
export interface LockedReview {
  id: string;
  target_type: 'message' | 'user';
  message_id: string | null;
  /** The flagged user, or the message's author (null once the author was deleted). */
  user_id: string | null;
  channel_id: string | null;
  channel_external_id: string | null;
  content: string | null;
}

/** Page cursors: open entries by id (oldest first), resolved ones by (resolved_at, id), newest first. */
export type ReviewCursor =
  { status: 'open'; id: string } | { status: 'resolved'; resolvedKey: string; id: string };

/** The distinct reasons an entry lists, earliest first: enough to judge, bounded for a target flagged by thousands. */
export const REASONS_SHOWN = 50;

const OPEN_TARGET = { message: 'message_id', user: 'target_user_id' } as const;

const REVIEW_COLUMNS = `r.id, r.target_type, r.message_id, r.target_user_id, r.status, r.flag_count,
  r.first_flagged_at, r.last_flagged_at, r.resolved_at, ${exactTime('r.resolved_at')} AS resolved_key,
  r.resolution_action, r.resolution_duration_seconds,
  (SELECT array_agg(x.reason ORDER BY x.first_at, x.reason)
     FROM (SELECT f.reason, min(f.created_at) AS first_at FROM flags f
            WHERE f.review_id = r.id AND f.reason IS NOT NULL
            GROUP BY f.reason ORDER BY first_at, f.reason LIMIT ${REASONS_SHOWN}) x) AS reasons,
  u.id AS u_id, u.external_id AS u_external_id, u.name AS u_name, u.avatar_url AS u_avatar_url,
  u.metadata AS u_metadata, u.created_at AS u_created_at, u.updated_at AS u_updated_at`;

/**
 * Flags and the review queue (CONTRACT §19). Every method takes the workspace or runs in a transaction
 * that already resolved the target within it.
 */
@Injectable()
export class FlagsRepository {
  constructor(private readonly events: EventLogService) {}

  /**
   * Files a flag in the caller's transaction, in three statements so that the target's open entry is
   * locked only from the last one to the commit (concurrent flags of one target queue on that row):
   * 1. the flag, ON CONFLICT DO NOTHING on the one-per-reporter index (null: the reporter had already
   *    flagged the target, and nothing was written), naming the open entry as it reads it now, or a new
   *    id (the foreign key is checked at commit);
   * 2. `message.flagged` / `user.flagged`;
   * 3. the entry's upsert on its partial unique index (count and last time); if the entry the flag named
   *    is no longer the open one (resolved, or opened meanwhile by another flag), the flag moves to the
   *    one the upsert answered, in the same statement.
   */
  async file(m: EntityManager, f: NewFlag): Promise<FlagView | null> {
    const t = f.target;
    const column = OPEN_TARGET[t.type];
    const messageId = t.type === 'message' ? t.messageId : null;
    const userId = t.type === 'user' ? t.userId : null;
    const candidate = newId();
    const inserted = await rows<{ id: string; review_id: string; created_at: Date }>(
      m,
      `INSERT INTO flags (id, workspace_id, review_id, target_type, message_id, target_user_id, by_user, reason, created_at)
       SELECT $1, $2, COALESCE((SELECT r.id FROM flag_reviews r WHERE r.${column} = $9 AND r.status = 'open'), $3),
              $4, $5, $6, $7, $8, clock_timestamp()
       ON CONFLICT (${column}, by_user) DO NOTHING
       RETURNING id, review_id, created_at`,
      [
        newId(),
        f.workspaceId,
        candidate,
        t.type,
        messageId,
        userId,
        f.byUser?.id ?? null,
        f.reason,
        messageId ?? userId,
      ],
    );
    const row = inserted[0];
    if (!row) return null;
    const view = flagView(f, row);
    await this.events.append(m, {
      workspaceId: f.workspaceId,
      type: t.type === 'message' ? 'message.flagged' : 'user.flagged',
      payload: flagPayload(view),
    });
    await m.query(
      `WITH rv AS (
         INSERT INTO flag_reviews AS r (id, workspace_id, target_type, message_id, target_user_id, flag_count,
                                        first_flagged_at, last_flagged_at)
         VALUES ($1, $2, $3, $4, $5, 1, clock_timestamp(), clock_timestamp())
         ON CONFLICT (${column}) WHERE status = 'open'
         DO UPDATE SET flag_count = r.flag_count + 1, last_flagged_at = greatest(r.last_flagged_at, EXCLUDED.last_flagged_at)
         RETURNING r.id)
       UPDATE flags f SET review_id = rv.id FROM rv WHERE f.id = $6 AND f.review_id <> rv.id`,
      [candidate, f.workspaceId, t.type, messageId, userId, row.id],
    );
    return view;
  }

  /** The reporter's flag of the target (the answer to a repeated flag), or null. */
  async findByReporter(m: EntityManager, f: NewFlag): Promise<FlagView | null> {
    const t = f.target;
    const found = await rows<{ id: string; reason: string | null; created_at: Date }>(
      m,
      `SELECT id, reason, created_at FROM flags
        WHERE workspace_id = $1 AND ${OPEN_TARGET[t.type]} = $2 AND by_user = $3`,
      [f.workspaceId, t.type === 'message' ? t.messageId : t.userId, f.byUser?.id ?? null],
    );
    const row = found[0];
    return row ? flagView({ ...f, reason: row.reason }, row) : null;
  }

  /**
   * The reporter and the user they flag by external id, with whether the two share a channel (what
   * makes a user visible to another, CONTRACT §19). The reporter is a JWT's user id or a backend key's
   * `user_external_id`.
   */
  async reporterAndUser(
    m: EntityManager,
    workspaceId: string,
    reporter: { id: string } | { externalId: string },
    targetExternalId: string,
  ): Promise<{ reporter: UserRef | null; target: UserRef | null; shared: boolean }> {
    const found = await rows<{
      a_id: string | null;
      a_external_id: string | null;
      a_name: string | null;
      t_id: string | null;
      t_external_id: string | null;
      t_name: string | null;
      shared: boolean;
    }>(
      m,
      `SELECT a.id AS a_id, a.external_id AS a_external_id, a.name AS a_name,
              t.id AS t_id, t.external_id AS t_external_id, t.name AS t_name,
              EXISTS (SELECT 1 FROM channel_members ca
                        JOIN channel_members ct ON ct.channel_id = ca.channel_id AND ct.user_id = t.id
                       WHERE ca.user_id = a.id) AS shared
         FROM (SELECT 1) one
         LEFT JOIN users a ON a.workspace_id = $1 AND (a.id = $2::uuid OR a.external_id = $3)
         LEFT JOIN users t ON t.workspace_id = $1 AND t.external_id = $4`,
      [
        workspaceId,
        'id' in reporter ? reporter.id : null,
        'externalId' in reporter ? reporter.externalId : null,
        targetExternalId,
      ],
    );
    const r = found[0]!;
    return {
      reporter: r.a_id ? { id: r.a_id, external_id: r.a_external_id!, name: r.a_name } : null,
      target: r.t_id ? { id: r.t_id, external_id: r.t_external_id!, name: r.t_name } : null,
      shared: r.shared,
    };
  }

  /** One page of the queue (limit + 1 rows): open entries oldest first, resolved ones newest resolution first. */
  async page(
    m: EntityManager,
    workspaceId: string,
    status: ReviewStatus,
    cursor: ReviewCursor | null,
    limit: number,
  ): Promise<ReviewRow[]> {
    if (status === 'open') {
      return rows(
        m,
        `SELECT ${REVIEW_COLUMNS}
           FROM flag_reviews r LEFT JOIN users u ON u.id = r.target_user_id
          WHERE r.workspace_id = $1 AND r.status = 'open' AND ($2::uuid IS NULL OR r.id > $2::uuid)
          ORDER BY r.id LIMIT $3`,
        [workspaceId, cursor?.id ?? null, limit],
      );
    }
    const after = cursor?.status === 'resolved' ? cursor : null;
    return rows(
      m,
      `SELECT ${REVIEW_COLUMNS}
         FROM flag_reviews r LEFT JOIN users u ON u.id = r.target_user_id
        WHERE r.workspace_id = $1 AND r.status = 'resolved'
          AND ($2::timestamptz IS NULL OR (r.resolved_at, r.id) < ($2::timestamptz, $3::uuid))
        ORDER BY r.resolved_at DESC, r.id DESC LIMIT $4`,
      [workspaceId, after?.resolvedKey ?? null, after?.id ?? null, limit],
    );
  }

  /** One entry of the workspace, or null. */
  async find(m: EntityManager, workspaceId: string, id: string): Promise<ReviewRow | null> {
    const found = await rows<ReviewRow>(
      m,
      `SELECT ${REVIEW_COLUMNS}
         FROM flag_reviews r LEFT JOIN users u ON u.id = r.target_user_id
        WHERE r.workspace_id = $1 AND r.id = $2`,
      [workspaceId, id],
    );
    return found[0] ?? null;
  }

  /**
   * The entry locked for the rest of the transaction if it is still open (null once it is resolved, or
   * gone), with the message's author, channel and content, or the flagged user.
   */
  async lockOpen(m: EntityManager, workspaceId: string, id: string): Promise<LockedReview | null> {
    const found = await rows<LockedReview>(
      m,
      `SELECT r.id, r.target_type, r.message_id, COALESCE(r.target_user_id, msg.user_id) AS user_id,
              msg.channel_id, c.external_id AS channel_external_id, msg.content
         FROM flag_reviews r
         LEFT JOIN messages msg ON msg.id = r.message_id
         LEFT JOIN channels c ON c.id = msg.channel_id
        WHERE r.workspace_id = $1 AND r.id = $2 AND r.status = 'open'
          FOR UPDATE OF r`,
      [workspaceId, id],
    );
    return found[0] ?? null;
  }

  /** Marks a locked open entry resolved; later flags of its target open a new entry. */
  async resolve(
    m: EntityManager,
    id: string,
    action: ReviewAction,
    durationSeconds: number | null,
  ): Promise<void> {
    await m.query(
      `UPDATE flag_reviews SET status = 'resolved', resolved_at = clock_timestamp(), resolution_action = $2,
              resolution_duration_seconds = $3
        WHERE id = $1 AND status = 'open'`,
      [id, action, durationSeconds],
    );
  }
}

function flagView(f: NewFlag, row: { id: string; created_at: Date }): FlagView {
  const t = f.target;
  return {
    id: row.id,
    target_type: t.type,
    ...(t.type === 'message' ? { message_id: t.messageId } : {}),
    user_id: t.type === 'message' ? t.authorId : t.userId,
    by_user: f.byUser,
    reason: f.reason,
    created_at: isoNotNull(row.created_at),
  };
}

/** CONTRACT §19's webhook data: the flag, with `flag_id` for its id. */
function flagPayload(v: FlagView): FlagPayload {
  return {
    flag_id: v.id,
    target_type: v.target_type,
    ...(v.message_id ? { message_id: v.message_id } : {}),
    user_id: v.user_id,
    by_user: v.by_user,
    reason: v.reason,
  };
}
