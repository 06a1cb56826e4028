import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export interface MuteRow {
  user_id: string;
  until: Date | null;
  reason: string | null;
  created_at: Date;
}

/** Workspace-wide posting mutes, one row per user; an expired row simply stops counting. */
@Injectable()
export class MutesRepository {
  async isMuted(m: EntityManager, workspaceId: string, userId: string): Promise<boolean> {
    const rows: unknown[] = await m.query(
      `SELECT 1 FROM mutes WHERE workspace_id = $1 AND user_id = $2 AND (until IS NULL OR until > clock_timestamp())`,
      [workspaceId, userId],
    );
    return rows.length > 0;
  }

  /** Sets (or replaces) the user's mute; `seconds` null = until lifted. */
  async upsert(
    m: EntityManager,
    workspaceId: string,
    userId: string,
    seconds: number | null,
    reason: string | null,
  ): Promise<MuteRow> {
    const rows: MuteRow[] = await m.query(
      `INSERT INTO mutes (user_id, workspace_id, until, reason, created_at)
       VALUES ($1, $2, CASE WHEN $3::int IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $3::int) END, $4, clock_timestamp())
       ON CONFLICT (user_id) DO UPDATE SET until = EXCLUDED.until, reason = EXCLUDED.reason, created_at = EXCLUDED.created_at
       RETURNING user_id, until, reason, created_at`,
      [userId, workspaceId, seconds, reason],
    );
    return rows[0]!;
  }

  async delete(m: EntityManager, workspaceId: string, userId: string): Promise<void> {
    await m.query(`DELETE FROM mutes WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, userId]);
  }
}
