import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { rows } from '../infra/database/sql';

export type MemberRole = 'admin' | 'member';

export interface MemberRow {
  channel_id: string;
  user_id: string;
  external_id: string;
  name: string | null;
  role: MemberRole | null;
  joined_at: Date;
  last_read_at: Date;
  last_delivered_at: Date;
}

/** A member's read and delivery cursors after a change. */
export interface MemberCursors {
  last_read_at: Date;
  last_delivered_at: Date;
}

const MEMBER_COLUMNS =
  'cm.channel_id, cm.user_id, u.external_id, u.name, cm.role, cm.joined_at, cm.last_read_at, cm.last_delivered_at';

/** The `channel_members` table: who is in a channel, their role and their read and delivery cursors. */
@Injectable()
export class ChannelMembersRepository {
  /** Members of these channels, earliest joined first. */
  async members(m: EntityManager, channelIds: string[]): Promise<MemberRow[]> {
    if (!channelIds.length) return [];
    return m.query(
      `SELECT ${MEMBER_COLUMNS}
         FROM channel_members cm JOIN users u ON u.id = cm.user_id
        WHERE cm.channel_id = ANY($1::uuid[])
        ORDER BY cm.joined_at, u.external_id`,
      [channelIds],
    );
  }

  async member(m: EntityManager, channelId: string, userId: string): Promise<MemberRow | null> {
    const found: MemberRow[] = await m.query(
      `SELECT ${MEMBER_COLUMNS}
         FROM channel_members cm JOIN users u ON u.id = cm.user_id
        WHERE cm.channel_id = $1 AND cm.user_id = $2`,
      [channelId, userId],
    );
    return found[0] ?? null;
  }

  /** Members of the channel among these external ids (mention targets). */
  async byExternalIds(
    m: EntityManager,
    workspaceId: string,
    channelId: string,
    externalIds: string[],
  ): Promise<{ id: string; external_id: string; name: string | null }[]> {
    if (!externalIds.length) return [];
    return m.query(
      `SELECT u.id, u.external_id, u.name
         FROM users u JOIN channel_members cm ON cm.user_id = u.id AND cm.channel_id = $2
        WHERE u.workspace_id = $1 AND u.external_id = ANY($3::text[])`,
      [workspaceId, channelId, externalIds],
    );
  }

  /** The ids of the channels a user belongs to. */
  async channelIdsOf(m: EntityManager, workspaceId: string, userId: string): Promise<string[]> {
    const found: { channel_id: string }[] = await m.query(
      `SELECT cm.channel_id FROM channel_members cm WHERE cm.user_id = $1 AND cm.workspace_id = $2`,
      [userId, workspaceId],
    );
    return found.map((r) => r.channel_id);
  }

  /**
   * Adds members; returns the ids actually added (existing members are left as they are). Call it in
   * the channel's write session: `sent_count` is read from the messages under the channel's lock.
   */
  async add(
    m: EntityManager,
    workspaceId: string,
    channelId: string,
    users: { id: string; role: MemberRole | null }[],
  ): Promise<string[]> {
    if (!users.length) return [];
    const added: { user_id: string }[] = await m.query(
      `INSERT INTO channel_members (channel_id, user_id, workspace_id, role, joined_at, last_read_at, last_delivered_at, sent_count)
       SELECT $1, u.id, $2, u.role, clock_timestamp(), clock_timestamp(), clock_timestamp(),
              -- a returning member's own messages keep their numbers (see the inbox counters)
              COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = u.id AND msg.channel_id = $1 AND msg.sender_no IS NOT NULL
                         ORDER BY msg.created_at DESC LIMIT 1), 0)
         FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS u(id, role, ord)
        ORDER BY u.ord
       ON CONFLICT (channel_id, user_id) DO NOTHING RETURNING user_id`,
      [channelId, workspaceId, users.map((u) => u.id), users.map((u) => u.role)],
    );
    return added.map((r) => r.user_id);
  }

  /** Removes members; returns the ids actually removed. */
  async remove(m: EntityManager, channelId: string, userIds: string[]): Promise<string[]> {
    if (!userIds.length) return [];
    const deleted = await rows<{ user_id: string }>(
      m,
      `DELETE FROM channel_members WHERE channel_id = $1 AND user_id = ANY($2::uuid[]) RETURNING user_id`,
      [channelId, userIds],
    );
    return deleted.map((r) => r.user_id);
  }

  async setRole(m: EntityManager, channelId: string, userId: string, role: MemberRole): Promise<void> {
    await m.query(`UPDATE channel_members SET role = $3 WHERE channel_id = $1 AND user_id = $2`, [
      channelId,
      userId,
      role,
    ]);
  }

  /**
   * Moves the read cursor (and the delivery cursor with it) to now, and drops a position marked unread;
   * cursors never move backwards.
   */
  async markRead(m: EntityManager, channelId: string, userId: string): Promise<MemberCursors | null> {
    const updated = await rows<MemberCursors>(
      m,
      `UPDATE channel_members SET last_read_at = GREATEST(last_read_at, clock_timestamp()),
              last_delivered_at = GREATEST(last_delivered_at, clock_timestamp()), unread_at = NULL, unread_id = NULL
        WHERE channel_id = $1 AND user_id = $2 RETURNING last_read_at, last_delivered_at`,
      [channelId, userId],
    );
    return updated[0] ?? null;
  }

  /** Moves the delivery cursor to now; it never moves backwards. */
  async markDelivered(m: EntityManager, channelId: string, userId: string): Promise<MemberCursors | null> {
    const updated = await rows<MemberCursors>(
      m,
      `UPDATE channel_members SET last_delivered_at = GREATEST(last_delivered_at, clock_timestamp())
        WHERE channel_id = $1 AND user_id = $2 RETURNING last_read_at, last_delivered_at`,
      [channelId, userId],
    );
    return updated[0] ?? null;
  }

  /** Every member's cursors, for GET /v1/channels/:id/receipts. */
  async cursors(
    m: EntityManager,
    channelId: string,
  ): Promise<{ external_id: string; last_read_at: Date; last_delivered_at: Date }[]> {
    return m.query(
      `SELECT u.external_id, cm.last_read_at, cm.last_delivered_at FROM channel_members cm JOIN users u ON u.id = cm.user_id
        WHERE cm.channel_id = $1 ORDER BY cm.joined_at, u.external_id`,
      [channelId],
    );
  }

  /** Every member with their role and when they were last seen, for GET /v1/channels/:id/presence. */
  async lastSeen(
    m: EntityManager,
    channelId: string,
  ): Promise<{ user_id: string; external_id: string; role: MemberRole | null; last_seen_at: Date | null }[]> {
    return m.query(
      `SELECT u.id AS user_id, u.external_id, cm.role, u.last_seen_at FROM channel_members cm JOIN users u ON u.id = cm.user_id
        WHERE cm.channel_id = $1 ORDER BY cm.joined_at, u.external_id`,
      [channelId],
    );
  }
}
