import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface WorkspaceRow {
  id: string;
  name: string;
  settings: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  api_key: string;
}

export interface KeyRow {
  workspace_id: string;
  api_key: string;
  secret_sealed: string;
  expires_at: Date | null;
  /** Milliseconds until expires_at by the database's clock (null: the current key). */
  expires_in_ms: number | null;
}

const KEY_COLUMNS = `workspace_id, api_key, secret_sealed, expires_at,
  (extract(epoch FROM expires_at - now()) * 1000)::float8 AS expires_in_ms`;

const WORKSPACE_COLUMNS = `w.id, w.name, w.settings, w.created_at, w.updated_at,
  (SELECT k.api_key FROM workspace_keys k WHERE k.workspace_id = w.id AND k.expires_at IS NULL
    ORDER BY k.created_at DESC LIMIT 1) AS api_key`;

@Injectable()
export class WorkspacesRepository {
  constructor(private readonly db: DataSource) {}

  async insert(m: EntityManager, id: string, name: string): Promise<void> {
    await m.query(`INSERT INTO workspaces (id, name) VALUES ($1, $2)`, [id, name]);
  }

  /** Inserts a key; false when the api_key already exists (bootstrap races). */
  async insertKey(
    m: EntityManager,
    key: { id: string; workspaceId: string; apiKey: string; secretSealed: string },
  ): Promise<boolean> {
    const rows: unknown[] = await m.query(
      `INSERT INTO workspace_keys (id, workspace_id, api_key, secret_sealed)
       VALUES ($1, $2, $3, $4) ON CONFLICT (api_key) DO NOTHING RETURNING id`,
      [key.id, key.workspaceId, key.apiKey, key.secretSealed],
    );
    return rows.length === 1;
  }

  async find(id: string, m: EntityManager = this.db.manager): Promise<WorkspaceRow | null> {
    const rows: WorkspaceRow[] = await m.query(
      `SELECT ${WORKSPACE_COLUMNS} FROM workspaces w WHERE w.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Newest first by id: ids are UUIDv7, so the order is creation order and the cursor is exact. */
  async list(limit: number, beforeId?: string): Promise<WorkspaceRow[]> {
    const params: unknown[] = [limit + 1];
    let where = '';
    if (beforeId) {
      params.push(beforeId);
      where = `WHERE w.id < $2::uuid`;
    }
    return this.db.query(
      `SELECT ${WORKSPACE_COLUMNS} FROM workspaces w ${where} ORDER BY w.id DESC LIMIT $1`,
      params,
    );
  }

  /** Ids are UUIDv7: the smallest is the oldest. */
  async oldestNamed(name: string): Promise<string | null> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM workspaces WHERE name = $1 ORDER BY id LIMIT 1`,
      [name],
    );
    return rows[0]?.id ?? null;
  }

  async count(): Promise<number> {
    const rows: { n: number }[] = await this.db.query(`SELECT count(*)::int AS n FROM workspaces`);
    return rows[0]?.n ?? 0;
  }

  async delete(id: string): Promise<boolean> {
    // wrapped in a CTE: TypeORM answers a bare DELETE/UPDATE … RETURNING with [rows, rowCount], not rows
    const rows: unknown[] = await this.db.query(
      `WITH d AS (DELETE FROM workspaces WHERE id = $1 RETURNING id) SELECT id FROM d`,
      [id],
    );
    return rows.length === 1;
  }

  async lockForUpdate(m: EntityManager, id: string): Promise<WorkspaceRow | null> {
    const rows: WorkspaceRow[] = await m.query(
      `SELECT id, name, settings, created_at, updated_at, NULL AS api_key FROM workspaces WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** The stored settings overrides; undefined when there is no such workspace. */
  async findSettings(
    id: string,
    m: EntityManager = this.db.manager,
  ): Promise<Record<string, unknown> | undefined> {
    const rows: { settings: Record<string, unknown> }[] = await m.query(
      `SELECT settings FROM workspaces WHERE id = $1`,
      [id],
    );
    return rows[0]?.settings;
  }

  async saveSettings(m: EntityManager, id: string, settings: unknown): Promise<void> {
    await m.query(`UPDATE workspaces SET settings = $2, updated_at = now() WHERE id = $1`, [id, settings]);
  }

  async expireCurrentKeys(m: EntityManager, workspaceId: string, graceSeconds: number): Promise<void> {
    await m.query(
      `UPDATE workspace_keys SET expires_at = now() + make_interval(secs => $2)
       WHERE workspace_id = $1 AND (expires_at IS NULL OR expires_at > now() + make_interval(secs => $2))`,
      [workspaceId, graceSeconds],
    );
  }

  /** A key that is current or still within its grace period. */
  async findActiveKey(apiKey: string): Promise<KeyRow | null> {
    const rows: KeyRow[] = await this.db.query(
      `SELECT ${KEY_COLUMNS} FROM workspace_keys
       WHERE api_key = $1 AND (expires_at IS NULL OR expires_at > now())`,
      [apiKey],
    );
    return rows[0] ?? null;
  }

  async findCurrentKey(workspaceId: string): Promise<KeyRow | null> {
    const rows: KeyRow[] = await this.db.query(
      `SELECT ${KEY_COLUMNS} FROM workspace_keys
       WHERE workspace_id = $1 AND expires_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      [workspaceId],
    );
    return rows[0] ?? null;
  }
}
