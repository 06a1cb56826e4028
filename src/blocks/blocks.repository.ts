import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { exactTime } from '../infra/database/sql';

export interface BlockRow {
  blocked_id: string;
  external_id: string;
  created_at: Date;
  /** created_at to the microsecond, for cursors */
  created_key: string;
}

@Injectable()
export class BlocksRepository {
  /** Users the blocker has blocked (the list a history or search read filters out). */
  async blockedIds(m: EntityManager, workspaceId: string, blockerId: string): Promise<string[]> {
    const rows: { blocked_id: string }[] = await m.query(
      `SELECT blocked_id FROM blocks WHERE workspace_id = $1 AND blocker_id = $2`,
      [workspaceId, blockerId],
    );
    return rows.map((r) => r.blocked_id);
  }

  /** Idempotent; `created` tells whether the block is new. */
  async insert(
    m: EntityManager,
    workspaceId: string,
    blockerId: string,
    blockedId: string,
  ): Promise<{ created_at: Date; created: boolean }> {
    const rows: { created_at: Date; created: boolean }[] = await m.query(
      `WITH ins AS (
         INSERT INTO blocks (blocker_id, blocked_id, workspace_id, created_at) VALUES ($1, $2, $3, clock_timestamp())
         ON CONFLICT (blocker_id, blocked_id) DO NOTHING RETURNING created_at)
       SELECT created_at, true AS created FROM ins
       UNION ALL
       SELECT created_at, false AS created FROM blocks WHERE blocker_id = $1 AND blocked_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [blockerId, blockedId, workspaceId],
    );
    return rows[0]!;
  }

  async delete(m: EntityManager, workspaceId: string, blockerId: string, blockedId: string): Promise<void> {
    await m.query(`DELETE FROM blocks WHERE workspace_id = $1 AND blocker_id = $2 AND blocked_id = $3`, [
      workspaceId,
      blockerId,
      blockedId,
    ]);
  }

  /** Newest first; `before` is the (created_key, blocked_id) of the last row of the previous page. */
  async list(
    m: EntityManager,
    workspaceId: string,
    blockerId: string,
    limit: number,
    before?: { createdKey: string; blockedId: string },
  ): Promise<BlockRow[]> {
    const params: unknown[] = [workspaceId, blockerId, limit + 1];
    let page = '';
    if (before) {
      params.push(before.createdKey, before.blockedId);
      page = `AND (b.created_at, b.blocked_id) < ($4::timestamptz, $5::uuid)`;
    }
    return m.query(
      `SELECT b.blocked_id, u.external_id, b.created_at, ${exactTime('b.created_at')} AS created_key
         FROM blocks b JOIN users u ON u.id = b.blocked_id
        WHERE b.workspace_id = $1 AND b.blocker_id = $2 ${page}
        ORDER BY b.created_at DESC, b.blocked_id DESC
        LIMIT $3`,
      params,
    );
  }
}
