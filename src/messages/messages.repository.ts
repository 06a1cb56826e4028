import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { exactTime } from '../infra/database/sql';
import type { AttachmentView, MessageType } from './message-view.service';

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

/** A history row: the id and the exact sort key (microseconds) for the next cursor. */
export interface PageRow {
  id: string;
  created_key: string;
}

export type HistoryBound =
  | { kind: 'newest' }
  | { kind: 'before'; createdKey: string; id: string }
  | { kind: 'after'; createdKey: string; id: string }
  | { kind: 'after-time'; time: string };

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

  /** The channel of a message of this workspace (for parent validation); null when there is none. */
  async channelOf(m: EntityManager, workspaceId: string, id: string): Promise<string | null> {
    const rows: { channel_id: string }[] = await m.query(
      `SELECT channel_id FROM messages WHERE workspace_id = $1 AND id = $2`,
      [workspaceId, id],
    );
    return rows[0]?.channel_id ?? null;
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
   * order is commit order within the channel) and advances the channel's last_message_at. Null when
   * (sender, idempotency_key) already exists: the caller answers that message as a replay.
   */
  async insert(m: EntityManager, msg: NewMessage): Promise<string | null> {
    const rows: { id: string }[] = await m.query(
      `WITH ins AS (
         INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url, attachment,
                               parent_id, idempotency_key, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, clock_timestamp())
         ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
         RETURNING id, created_at),
       touched AS (
         UPDATE channels c SET last_message_at = GREATEST(c.last_message_at, ins.created_at) FROM ins WHERE c.id = $3 RETURNING c.id)
       SELECT ins.id FROM ins`,
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
    return rows[0]?.id ?? null;
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
        params.push(bound.time);
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
