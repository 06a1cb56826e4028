import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../common/ids';

export interface BanRow {
  id: string;
  user_id: string;
  u_external_id: string;
  u_name: string | null;
  channel_id: string | null;
  channel_external_id: string | null;
  shadow: boolean;
  reason: string | null;
  expires_at: Date | null;
  created_at: Date;
  by_id: string | null;
  by_external_id: string | null;
  by_name: string | null;
}

export interface NewBan {
  userId: string;
  /** Null: workspace-wide. */
  channelId: string | null;
  reason: string | null;
  /** Null: until lifted. */
  durationSeconds: number | null;
  shadow: boolean;
  /** The group admin who bans; null for the backend or moderation. */
  byUserId: string | null;
}

/** A ban in force: one that has run out simply stops counting (and the next ban of its scope replaces it). */
export const BAN_IN_FORCE = `(bn.expires_at IS NULL OR bn.expires_at > clock_timestamp())`;

/** SQL: whether the user (an expression for their id) is banned workspace-wide (not shadow) right now: their sockets are refused. */
export const bannedFromWorkspaceSql = (userId: string) =>
  `EXISTS (SELECT 1 FROM bans bn WHERE bn.user_id = ${userId} AND bn.channel_id IS NULL AND NOT bn.shadow AND ${BAN_IN_FORCE})`;

/** The view's columns over `bans bn` (with the user, channel and banning user joined). */
const VIEW = `SELECT bn.id, bn.user_id, u.external_id AS u_external_id, u.name AS u_name, bn.channel_id,
                     c.external_id AS channel_external_id, bn.shadow, bn.reason, bn.expires_at, bn.created_at,
                     by.id AS by_id, by.external_id AS by_external_id, by.name AS by_name`;
const JOINS = `JOIN users u ON u.id = bn.user_id
               LEFT JOIN channels c ON c.id = bn.channel_id
               LEFT JOIN users by ON by.id = bn.banned_by`;

/** CONTRACT §19's bans, one row per user and scope (migration 1763691000000). Every query carries the workspace. */
@Injectable()
export class BansRepository {
  /** Sets or replaces the user's ban of that scope, in the caller's transaction. */
  async upsert(m: EntityManager, workspaceId: string, b: NewBan): Promise<BanRow> {
    const rows: BanRow[] = await m.query(
      `WITH bn AS (
         INSERT INTO bans AS x (id, workspace_id, user_id, channel_id, shadow, reason, expires_at, banned_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6,
                 CASE WHEN $7::int IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $7::int) END,
                 $8, clock_timestamp())
         ON CONFLICT (user_id, channel_id) DO UPDATE
           SET shadow = EXCLUDED.shadow, reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at,
               banned_by = EXCLUDED.banned_by, created_at = EXCLUDED.created_at
         RETURNING x.*)
       ${VIEW} FROM bn ${JOINS}`,
      [newId(), workspaceId, b.userId, b.channelId, b.shadow, b.reason, b.durationSeconds, b.byUserId],
    );
    return rows[0]!;
  }

  /** Lifts the user's ban of that scope; the ban as it was if one was in force. */
  async delete(
    m: EntityManager,
    workspaceId: string,
    userId: string,
    channelId: string | null,
  ): Promise<BanRow | null> {
    const rows: BanRow[] = await m.query(
      `WITH bn AS (
         DELETE FROM bans x WHERE x.workspace_id = $1 AND x.user_id = $2 AND x.channel_id IS NOT DISTINCT FROM $3::uuid
         RETURNING x.*)
       ${VIEW} FROM bn ${JOINS} WHERE ${BAN_IN_FORCE}`,
      [workspaceId, userId, channelId],
    );
    return rows[0] ?? null;
  }

  /** Bans in force, newest first (ids are UUIDv7), `limit` rows; `channelId` narrows to one channel's. */
  async list(
    m: EntityManager,
    workspaceId: string,
    f: { channelId: string | null; beforeId: string | null; limit: number },
  ): Promise<BanRow[]> {
    return m.query(
      `${VIEW} FROM bans bn ${JOINS}
        WHERE bn.workspace_id = $1 AND ($2::uuid IS NULL OR bn.channel_id = $2::uuid)
          AND ($3::uuid IS NULL OR bn.id < $3::uuid) AND ${BAN_IN_FORCE}
        ORDER BY bn.id DESC LIMIT ${Math.trunc(f.limit)}`,
      [workspaceId, f.channelId, f.beforeId],
    );
  }
}
