import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids';

export interface UserRow {
  id: string;
  workspace_id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  metadata: Record<string, unknown>;
  last_seen_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface UserFields {
  external_id: string;
  name?: string;
  avatar_url?: string;
  metadata?: Record<string, unknown>;
}

const COLUMNS =
  'id, workspace_id, external_id, name, avatar_url, metadata, last_seen_at, created_at, updated_at';

@Injectable()
export class UsersRepository {
  constructor(private readonly db: DataSource) {}

  /** Insert or update by (workspace, external_id); omitted fields keep their value. `inserted` tells which. */
  async upsert(
    m: EntityManager,
    workspaceId: string,
    u: UserFields,
  ): Promise<UserRow & { inserted: boolean }> {
    const rows: (UserRow & { inserted: boolean })[] = await m.query(
      `INSERT INTO users (id, workspace_id, external_id, name, avatar_url, metadata)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::jsonb, '{}'::jsonb))
       ON CONFLICT (workspace_id, external_id) DO UPDATE SET
         name = CASE WHEN $7 THEN EXCLUDED.name ELSE users.name END,
         avatar_url = CASE WHEN $8 THEN EXCLUDED.avatar_url ELSE users.avatar_url END,
         metadata = CASE WHEN $9 THEN EXCLUDED.metadata ELSE users.metadata END,
         updated_at = now()
       RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
      [
        newId(),
        workspaceId,
        u.external_id,
        u.name ?? null,
        u.avatar_url ?? null,
        u.metadata === undefined ? null : JSON.stringify(u.metadata),
        u.name !== undefined,
        u.avatar_url !== undefined,
        u.metadata !== undefined,
      ],
    );
    return rows[0]!;
  }

  async findByExternalId(
    workspaceId: string,
    externalId: string,
    m: EntityManager = this.db.manager,
  ): Promise<UserRow | null> {
    const rows: UserRow[] = await m.query(
      `SELECT ${COLUMNS} FROM users WHERE workspace_id = $1 AND external_id = $2`,
      [workspaceId, externalId],
    );
    return rows[0] ?? null;
  }

  /** Users of a workspace by external id; the result keeps only those that exist. */
  async findManyByExternalIds(
    workspaceId: string,
    externalIds: string[],
    m: EntityManager = this.db.manager,
  ): Promise<UserRow[]> {
    if (!externalIds.length) return [];
    return m.query(`SELECT ${COLUMNS} FROM users WHERE workspace_id = $1 AND external_id = ANY($2::text[])`, [
      workspaceId,
      externalIds,
    ]);
  }
}
