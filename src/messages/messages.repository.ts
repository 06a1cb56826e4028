import type { Instant } from '../common/rfc3339';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { QuotedMessagePayload } from '../events/event-types';
import { exactTime } from '../infra/database/sql';
import { QUOTE_MAX_CODE_POINTS } from './message-view.service';
import type { MessageSource } from './message-view.service';

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
      `SELECT p.channel_id, p.id AS p_id, p.user_id AS p_user_id, pu.name AS p_user_name,
              left(p.content, ${QUOTE_MAX_CODE_POINTS}) AS p_content, p.type AS p_type, p.deleted_at IS NOT NULL AS p_deleted
         FROM messages p LEFT JOIN users pu ON pu.id = p.user_id
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

  async edit(m: EntityManager, id: string, content: string): Promise<void> {
    await m.query(`UPDATE messages SET content = $2, edited_at = clock_timestamp() WHERE id = $1`, [
      id,
      content,
    ]);
  }

  /** Blanks content and attachment and stamps deleted_at. */
  async unsend(m: EntityManager, id: string): Promise<void> {
    await m.query(
      `UPDATE messages SET content = '', attachment_url = NULL, attachment = NULL, deleted_at = clock_timestamp() WHERE id = $1`,
      [id],
    );
  }

  /**
   * One history page (limit + 1 rows, to tell whether there is more) as a source for
   * MessageViews.rows: newest first by (created_at, id), or oldest first for the `after` forms.
   * Messages of users the viewer ($2 of the rendering statement) blocks are left out.
   */
  pageSource(channelId: string, bound: HistoryBound, limit: number): MessageSource {
    // $1 (workspace) and $2 (viewer) belong to the rendering statement; ours start at $3
    const params: unknown[] = [channelId, limit + 1];
    // the channel was found in the workspace; the rendering statement checks the workspace of every row
    // again, and a workspace condition here would steer the planner off the (channel_id, created_at) index
    const where = [
      'msg.channel_id = $3',
      'NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $2::uuid AND b.blocked_id = msg.user_id)',
    ];
    const arg = (v: unknown) => `$${params.push(v) + 2}`;
    let order = 'DESC';
    switch (bound.kind) {
      case 'newest':
        break;
      case 'before':
        where.push(`(msg.created_at, msg.id) < (${arg(bound.createdKey)}::timestamptz, ${arg(bound.id)}::uuid)`);
        break;
      case 'after':
        where.push(`(msg.created_at, msg.id) > (${arg(bound.createdKey)}::timestamptz, ${arg(bound.id)}::uuid)`);
        order = 'ASC';
        break;
      case 'after-time':
        // CONTRACT §21: later than the time as shown, at millisecond precision. A message whose created_at
        // prints as that millisecond is left out (created_at keeps microseconds), so the bound is the next
        // millisecond; a plain range on created_at keeps the (channel_id, created_at) index scan.
        where.push(`msg.created_at >= (${arg(toMillisecond(bound.time))}::timestamptz + interval '1 millisecond')`);
        order = 'ASC';
        break;
    }
    return {
      sql: `SELECT msg.id, row_number() OVER (ORDER BY msg.created_at ${order}, msg.id ${order}) AS ord, ${exactTime('msg.created_at')} AS created_key
              FROM (SELECT msg.id, msg.created_at FROM messages msg
                     WHERE ${where.join(' AND ')}
                     ORDER BY msg.created_at ${order}, msg.id ${order}
                     LIMIT $4) msg`,
      params,
    };
  }
}

/** The instant cut to its millisecond (`…T10:00:00.123456Z` → `…T10:00:00.123Z`), as the API prints times. */
function toMillisecond(time: Instant): string {
  return `${time.utc.slice(0, 23)}Z`;
}
