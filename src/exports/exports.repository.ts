import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId } from '../common/ids';
import { rows } from '../infra/database/sql';

export type ExportStatus = 'pending' | 'ready' | 'failed';
export const EXPORT_STATUSES: readonly ExportStatus[] = ['pending', 'ready', 'failed'];

export interface ExportRow {
  id: string;
  workspace_id: string;
  user_id: string | null;
  user_external_id: string;
  status: ExportStatus;
  object_key: string | null;
  attempts: number;
  created_at: Date;
  expires_at: Date | null;
}

/** A build's claim on a pending export: the attempt it is (1-based) and whose lease it holds. */
export interface ExportClaim extends ExportRow {
  owner: string;
}

/** How long a ready or failed export is kept. */
export const EXPORT_RETENTION_MS = 7 * 86_400_000;

const COLUMNS = `id, workspace_id, user_id, user_external_id, status, object_key, attempts, created_at, expires_at`;

/** `user_exports`: the export requests, their build leases and their expiry. */
@Injectable()
export class ExportsRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * A new pending export of the user, or the one already pending (one build per user at a time: a
   * second request while the first is being built answers the same export). The partial unique index
   * makes this race-free across instances.
   */
  async requestFor(workspaceId: string, user: { id: string; external_id: string }): Promise<ExportRow> {
    for (let i = 0; i < 3; i++) {
      const inserted = await rows<ExportRow>(
        this.db.manager,
        `INSERT INTO user_exports (id, workspace_id, user_id, user_external_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id) WHERE status = 'pending' DO NOTHING RETURNING ${COLUMNS}`,
        [newId(), workspaceId, user.id, user.external_id],
      );
      if (inserted[0]) return inserted[0];
      const pending = await rows<ExportRow>(
        this.db.manager,
        `SELECT ${COLUMNS} FROM user_exports WHERE user_id = $1 AND workspace_id = $2 AND status = 'pending'`,
        [user.id, workspaceId],
      );
      if (pending[0]) return pending[0];
      // the pending one finished between the two statements: try again
    }
    throw new Error('could not record the export request');
  }

  /** An export of the workspace that is not past its expiry (the sweeper may not have removed it yet). */
  async find(workspaceId: string, id: string): Promise<ExportRow | null> {
    const found = await rows<ExportRow>(
      this.db.manager,
      `SELECT ${COLUMNS} FROM user_exports
        WHERE id = $1 AND workspace_id = $2 AND (expires_at IS NULL OR expires_at > now())`,
      [id, workspaceId],
    );
    return found[0] ?? null;
  }

  /**
   * Takes the build of a pending export for `leaseMs` and counts the attempt. Null when the export is
   * not pending (ready, failed, deleted) or another build holds a live lease.
   */
  async claim(id: string, leaseMs: number): Promise<ExportClaim | null> {
    const owner = newId();
    const claimed = await rows<ExportRow>(
      this.db.manager,
      `UPDATE user_exports SET attempts = attempts + 1, lease_owner = $2,
              lease_until = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
        WHERE id = $1 AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
        RETURNING ${COLUMNS}`,
      [id, owner, leaseMs],
    );
    return claimed[0] ? { ...claimed[0], owner } : null;
  }

  /** Extends a held lease; false when it was lost (expired and taken, or the export is gone). */
  async renew(claim: ExportClaim, leaseMs: number): Promise<boolean> {
    const renewed = await rows<{ id: string }>(
      this.db.manager,
      `UPDATE user_exports SET lease_until = now() + make_interval(secs => $3::double precision / 1000)
        WHERE id = $1 AND lease_owner = $2 AND status = 'pending' RETURNING id`,
      [claim.id, claim.owner, leaseMs],
    );
    return renewed.length > 0;
  }

  /** 'ready'; 'lost' when another build holds the export now; 'gone' when the export was deleted. */
  async markReady(claim: ExportClaim, objectKey: string, size: number): Promise<'ready' | 'lost' | 'gone'> {
    const done = await rows<{ mine: boolean; present: boolean }>(
      this.db.manager,
      `WITH u AS (
         UPDATE user_exports SET status = 'ready', object_key = $3, size_bytes = $4, ready_at = now(),
                expires_at = now() + make_interval(secs => $5::double precision / 1000),
                lease_owner = NULL, lease_until = NULL, error = NULL, updated_at = now()
          WHERE id = $1 AND lease_owner = $2 AND status = 'pending' RETURNING id)
       SELECT EXISTS (SELECT 1 FROM u) AS mine, EXISTS (SELECT 1 FROM user_exports WHERE id = $1) AS present`,
      [claim.id, claim.owner, objectKey, size, EXPORT_RETENTION_MS],
    );
    const r = done[0];
    if (r?.mine) return 'ready';
    return r?.present ? 'lost' : 'gone';
  }

  /**
   * Gives up on a pending export (kept, as `failed`, for the retention period). With a claim, only
   * while the claim's lease is held; without one (the sweeper), only when no live lease is held.
   */
  async markFailed(id: string, error: string, claim?: ExportClaim): Promise<boolean> {
    const failed = await rows<{ id: string }>(
      this.db.manager,
      `UPDATE user_exports SET status = 'failed', error = left($2, 1000),
              expires_at = now() + make_interval(secs => $3::double precision / 1000),
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND status = 'pending'
          AND (CASE WHEN $4::uuid IS NULL THEN lease_until IS NULL OR lease_until < now() ELSE lease_owner = $4::uuid END)
        RETURNING id`,
      [id, error, EXPORT_RETENTION_MS, claim?.owner ?? null],
    );
    return failed.length > 0;
  }

  /** Lets go of a lease so a retry can claim at once; `refund` uncounts the attempt (a shutdown, not a failure). */
  async release(claim: ExportClaim, refund = false): Promise<void> {
    await this.db.query(
      `UPDATE user_exports SET lease_owner = NULL, lease_until = NULL, updated_at = now(),
              attempts = CASE WHEN $3 THEN greatest(attempts - 1, 0) ELSE attempts END
        WHERE id = $1 AND lease_owner = $2`,
      [claim.id, claim.owner, refund],
    );
  }

  /**
   * Exports to delete: past their expiry, or whose user was deleted (an erasure takes the user's
   * exports along) and that no build holds.
   */
  async due(
    now: Date,
    limit: number,
  ): Promise<{ id: string; object_key: string | null; workspace_id: string }[]> {
    return this.db.query(
      `(SELECT id, object_key, workspace_id FROM user_exports
         WHERE status IN ('ready', 'failed') AND expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2)
       UNION
       (SELECT id, object_key, workspace_id FROM user_exports
         WHERE user_id IS NULL AND (lease_until IS NULL OR lease_until < $1::timestamptz) LIMIT $2)`,
      [now.toISOString(), limit],
    );
  }

  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM user_exports WHERE id = $1`, [id]);
  }

  /**
   * Pending exports that no build holds and that have not moved for `graceMs`: their job was lost (a
   * restart of the in-process queue, a Redis outage at enqueue) or ran out of attempts.
   */
  async stalled(now: Date, graceMs: number, limit: number): Promise<{ id: string; attempts: number }[]> {
    return this.db.query(
      `SELECT id, attempts FROM user_exports
        WHERE status = 'pending' AND user_id IS NOT NULL
          AND (lease_until IS NULL OR lease_until < $1::timestamptz)
          AND updated_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)
        ORDER BY updated_at LIMIT $3`,
      [now.toISOString(), graceMs, limit],
    );
  }
}
