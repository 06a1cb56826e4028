import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { SigningMode } from './webhook-events';

export interface WebhookRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  signing: SigningMode;
  secret_sealed: string | null;
  consecutive_failures: number;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, workspace_id, url, events, description, enabled, signing, secret_sealed, consecutive_failures,
  disabled_at, disabled_reason, created_at, updated_at`;

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  /** With a new url: the policy it was accepted under. */
  allowPrivateNetworks?: boolean;
}

/**
 * Webhook subscriptions (UPDATE/DELETE … RETURNING are wrapped in a CTE: TypeORM answers a bare one with
 * [rows, rowCount]).
 * Every method takes the workspace: another workspace's webhook is simply not found.
 */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: DataSource) {}

  async insert(row: {
    id: string;
    workspaceId: string;
    url: string;
    events: string[];
    description: string | null;
    signing: SigningMode;
    secretSealed: string | null;
    allowPrivateNetworks: boolean;
  }): Promise<WebhookRow> {
    const rows: WebhookRow[] = await this.db.query(
      `INSERT INTO webhooks (id, workspace_id, url, events, description, signing, secret_sealed, allow_private_networks)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [
        row.id,
        row.workspaceId,
        row.url,
        row.events,
        row.description,
        row.signing,
        row.secretSealed,
        row.allowPrivateNetworks,
      ],
    );
    return rows[0]!;
  }

  async find(
    workspaceId: string,
    id: string,
    m: EntityManager = this.db.manager,
  ): Promise<WebhookRow | null> {
    const rows: WebhookRow[] = await m.query(
      `SELECT ${COLUMNS} FROM webhooks WHERE workspace_id = $1 AND id = $2`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /** Newest first, keyset on id (UUIDv7). */
  async list(workspaceId: string, limit: number, beforeId?: string): Promise<WebhookRow[]> {
    const rows: WebhookRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM webhooks
        WHERE workspace_id = $1 AND ($2::uuid IS NULL OR id < $2::uuid)
        ORDER BY id DESC LIMIT $3`,
      [workspaceId, beforeId ?? null, limit],
    );
    return rows;
  }

  /**
   * Applies a PATCH. Enabling resets the failure count and clears the disabled marks; disabling through
   * the API records when and why, like an auto-disable does.
   */
  async update(workspaceId: string, id: string, c: WebhookChanges): Promise<WebhookRow | null> {
    const rows: WebhookRow[] = await this.db.query(
      `WITH r AS (UPDATE webhooks SET
         url = COALESCE($3, url),
         allow_private_networks = CASE WHEN $3 IS NULL THEN allow_private_networks ELSE $8 END,
         events = COALESCE($4::text[], events),
         description = CASE WHEN $5::boolean THEN $6 ELSE description END,
         enabled = COALESCE($7, enabled),
         consecutive_failures = CASE WHEN $7 IS TRUE THEN 0 ELSE consecutive_failures END,
         disabled_at = CASE WHEN $7 IS TRUE THEN NULL WHEN $7 IS FALSE AND enabled THEN now() ELSE disabled_at END,
         disabled_reason = CASE WHEN $7 IS TRUE THEN NULL WHEN $7 IS FALSE AND enabled THEN 'disabled through the API' ELSE disabled_reason END,
         updated_at = now()
       WHERE workspace_id = $1 AND id = $2
       RETURNING ${COLUMNS}) SELECT * FROM r`,
      [
        workspaceId,
        id,
        c.url ?? null,
        c.events ?? null,
        c.description !== undefined,
        c.description ?? null,
        c.enabled ?? null,
        c.allowPrivateNetworks ?? false,
      ],
    );
    return rows[0] ?? null;
  }

  async setSecret(workspaceId: string, id: string, secretSealed: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `WITH r AS (UPDATE webhooks SET secret_sealed = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING id) SELECT id FROM r`,
      [workspaceId, id, secretSealed],
    );
    return rows.length > 0;
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `WITH r AS (DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2 RETURNING id) SELECT id FROM r`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }
}
