import type { Instant } from '../common/rfc3339';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CHANNEL_COLUMNS, ChannelRow } from '../channels/channels.repository';
import type { QuotedMessagePayload } from '../events/event-types';
import { exactTime } from '../infra/database/sql';
import { QUOTE_MAX_CODE_POINTS } from './message-view.service';
import type { AttachmentView, MessageType, MessageUserView } from './message-view.service';

/** What the write paths (edit, unsend, react) need to know about a message. */
export interface MessageHead {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  type: MessageType;
  attachment_url: string | null;
  deleted_at: Date | null;
  /** Seconds since it was sent, by the database's clock (windows are measured there). */
  age_seconds: number;
}

export interface NewMessage {
  id: string;
  workspaceId: string;
  channelId: string;
  userId: string | null;
  senderKey: string;
  type: MessageType;
  content: string;
  attachmentUrl: string | null;
  attachment: AttachmentView | null;
  parentId: string | null;
  idempotencyKey: string | null;
}

/** What `insert` answers. */
export interface InsertedMessage {
  /** False when the sender is not (any more) a member: nothing was inserted. */
  member: boolean;
  /** Null when nothing was inserted (an idempotency key already used, or not a member). */
  id: string | null;
  created_at: Date | null;
}

/** A parent message: its channel and the quote a reply to it carries. */
export interface ParentRow {
  channel_id: string;
  quote: QuotedMessagePayload;
}

/** `sendContext`'s answer. */
export interface SendContext {
  channel: ChannelRow;
  /** The sender's user row, null when there is none (a system message, or an unknown external id). */
  sender: MessageUserView | null;
  member: boolean;
  muted: boolean;
  /** The message the idempotency key already names, if any. */
  replayId: string | null;
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
  async head(m: EntityManager, workspaceId: string, id: string, lock = false): Promise<MessageHead | null> {
    const rows: MessageHead[] = await m.query(
      `SELECT msg.id, msg.channel_id, c.external_id AS channel_external_id, msg.user_id, msg.type, msg.attachment_url,
              msg.deleted_at, extract(epoch FROM clock_timestamp() - msg.created_at)::float8 AS age_seconds
         FROM messages msg JOIN channels c ON c.id = msg.channel_id
        WHERE msg.workspace_id = $1 AND msg.id = $2
        ${lock ? 'FOR NO KEY UPDATE OF msg' : ''}`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  async isMember(m: EntityManager, channelId: string, userId: string): Promise<boolean> {
    const rows: unknown[] = await m.query(
      `SELECT 1 FROM channel_members WHERE channel_id = $1 AND user_id = $2`,
      [channelId, userId],
    );
    return rows.length > 0;
  }

  async findIdByIdempotencyKey(
    m: EntityManager,
    workspaceId: string,
    senderKey: string,
    key: string,
  ): Promise<string | null> {
    const rows: { id: string }[] = await m.query(
      `SELECT id FROM messages WHERE workspace_id = $1 AND sender_key = $2 AND idempotency_key = $3`,
      [workspaceId, senderKey, key],
    );
    return rows[0]?.id ?? null;
  }

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

  /**
   * Everything a send checks before it persists, in one round trip: the channel (by id, tried first,
   * or external_id), the sender (by id for a user token, by external id for a backend key), whether the
   * sender is a member and muted, and the message an idempotency key already names. The caller applies
   * CONTRACT §7's check order to the answer. Null when the channel is not in the workspace.
   */
  async sendContext(
    m: EntityManager,
    workspaceId: string,
    channelRef: string,
    refIsId: boolean,
    sender: { id: string } | { externalId: string } | null,
    idempotencyKey: string | null,
  ): Promise<SendContext | null> {
    const rows: (ChannelRow & {
      s_id: string | null;
      s_external_id: string | null;
      s_name: string | null;
      s_avatar_url: string | null;
      s_member: boolean;
      s_muted: boolean;
      replay_id: string | null;
    })[] = await m.query(
      `WITH ch AS (
         SELECT ${CHANNEL_COLUMNS} FROM channels c
          WHERE c.workspace_id = $1 AND (c.id = $2::uuid OR c.external_id = $3)
          ORDER BY (c.id = $2::uuid) DESC NULLS LAST LIMIT 1),
       s AS (
         SELECT u.id, u.external_id, u.name, u.avatar_url FROM users u
          WHERE u.workspace_id = $1 AND (u.id = $4::uuid OR u.external_id = $5))
       SELECT ch.*, s.id AS s_id, s.external_id AS s_external_id, s.name AS s_name, s.avatar_url AS s_avatar_url,
              EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = ch.id AND cm.user_id = s.id) AS s_member,
              EXISTS (SELECT 1 FROM mutes mu WHERE mu.workspace_id = $1 AND mu.user_id = s.id
                         AND (mu.until IS NULL OR mu.until > clock_timestamp())) AS s_muted,
              (SELECT msg.id FROM messages msg WHERE msg.workspace_id = $1 AND $6::text IS NOT NULL
                  AND msg.sender_key = COALESCE(s.id::text, 'system') AND msg.idempotency_key = $6::text) AS replay_id
         FROM ch LEFT JOIN s ON true`,
      [
        workspaceId,
        refIsId ? channelRef : null,
        channelRef,
        sender && 'id' in sender ? sender.id : null,
        sender && 'externalId' in sender ? sender.externalId : null,
        idempotencyKey,
      ],
    );
    const r = rows[0];
    if (!r) return null;
    const { s_id, s_external_id, s_name, s_avatar_url, s_member, s_muted, replay_id, ...channel } = r;
    return {
      channel,
      sender: s_id ? { id: s_id, external_id: s_external_id!, name: s_name, avatar_url: s_avatar_url } : null,
      member: s_member,
      muted: s_muted,
      replayId: replay_id,
    };
  }

  /** Members of the channel among these external ids. */
  async membersByExternalId(m: EntityManager, workspaceId: string, channelId: string, externalIds: string[]) {
    if (!externalIds.length) return [];
    const rows: { id: string; external_id: string; name: string | null }[] = await m.query(
      `SELECT u.id, u.external_id, u.name
         FROM users u JOIN channel_members cm ON cm.user_id = u.id AND cm.channel_id = $2
        WHERE u.workspace_id = $1 AND u.external_id = ANY($3::text[])`,
      [workspaceId, channelId, externalIds],
    );
    return rows;
  }

  /**
   * Inserts the message stamped with clock_timestamp() (the caller holds the channel lock, so created_at
   * order is commit order within the channel) and advances the channel's last_message_at, in one round
   * trip. The sender's membership is checked by the same statement, which runs after the lock was taken,
   * so a concurrent removal is seen: `member` false and nothing inserted. `id` is null when
   * (sender, idempotency_key) already exists: the caller answers that message as a replay.
   */
  async insert(m: EntityManager, msg: NewMessage): Promise<InsertedMessage> {
    const rows: InsertedMessage[] = await m.query(
      `WITH mem AS (
         SELECT $4::uuid IS NULL OR EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $3::uuid AND user_id = $4::uuid) AS ok),
       ins AS (
         INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url, attachment,
                               parent_id, idempotency_key, created_at)
         SELECT $1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::text, $6::text, $7::text, $8::text, $9::jsonb, $10::uuid, $11::text,
                clock_timestamp()
           FROM mem WHERE mem.ok
         ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
         RETURNING id, created_at),
       touched AS (
         UPDATE channels c SET last_message_at = GREATEST(c.last_message_at, ins.created_at) FROM ins WHERE c.id = $3::uuid RETURNING c.id)
       SELECT mem.ok AS member, ins.id, ins.created_at FROM mem LEFT JOIN ins ON true`,
      [
        msg.id,
        msg.workspaceId,
        msg.channelId,
        msg.userId,
        msg.senderKey,
        msg.type,
        msg.content,
        msg.attachmentUrl,
        msg.attachment === null ? null : JSON.stringify(msg.attachment),
        msg.parentId,
        msg.idempotencyKey,
      ],
    );
    return rows[0] ?? { member: false, id: null, created_at: null };
  }

  async insertMentions(
    m: EntityManager,
    messageId: string,
    channelId: string,
    userIds: string[],
  ): Promise<void> {
    if (!userIds.length) return;
    await m.query(
      `INSERT INTO message_mentions (message_id, user_id, channel_id, position, created_at)
       SELECT $1, x.user_id, $2, x.ord::smallint, (SELECT created_at FROM messages WHERE id = $1)
         FROM unnest($3::uuid[]) WITH ORDINALITY AS x(user_id, ord)
       ON CONFLICT DO NOTHING`,
      [messageId, channelId, userIds],
    );
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
   * One history page (limit + 1 rows, to tell whether there is more): newest first by (created_at, id),
   * or oldest first for the `after` forms. Messages of `hiddenUserIds` (the viewer's blocks) are left out.
   */
  async page(
    m: EntityManager,
    workspaceId: string,
    channelId: string,
    bound: HistoryBound,
    limit: number,
    hiddenUserIds: string[],
  ): Promise<PageRow[]> {
    const params: unknown[] = [workspaceId, channelId, limit + 1];
    const where = ['msg.workspace_id = $1', 'msg.channel_id = $2'];
    if (hiddenUserIds.length) {
      params.push(hiddenUserIds);
      where.push(`(msg.user_id IS NULL OR msg.user_id <> ALL($${params.length}::uuid[]))`);
    }
    let order = 'DESC';
    switch (bound.kind) {
      case 'newest':
        break;
      case 'before':
        params.push(bound.createdKey, bound.id);
        where.push(
          `(msg.created_at, msg.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
        );
        break;
      case 'after':
        params.push(bound.createdKey, bound.id);
        where.push(
          `(msg.created_at, msg.id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
        );
        order = 'ASC';
        break;
      case 'after-time':
        // compared with the stored microseconds: the message shown with that very millisecond may come
        // again (clients de-duplicate by id), but one a few microseconds newer is never skipped
        params.push(bound.time.utc);
        where.push(`msg.created_at > $${params.length}::timestamptz`);
        order = 'ASC';
        break;
    }
    return m.query(
      `SELECT msg.id, ${exactTime('msg.created_at')} AS created_key
         FROM messages msg
        WHERE ${where.join(' AND ')}
        ORDER BY msg.created_at ${order}, msg.id ${order}
        LIMIT $3`,
      params,
    );
  }
}
