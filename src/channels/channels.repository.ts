import { Injectable } from '@nestjs/common';
import { WorkspaceSettingsCache } from '../workspaces/workspace-settings.cache';
import { isLarge, WorkspaceSettings } from '../workspaces/workspace-settings';
import { EntityManager } from 'typeorm';
import type { ChannelPayload } from '../contract/events';
import { isoNotNull } from '../common/time';
import { exactTime } from '../infra/database/sql';
import { ChannelMembersRepository, MemberRow } from './channel-members.repository';

export interface ChannelRow {
  id: string;
  workspace_id: string;
  type: 'direct' | 'group';
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  created_by: string | null;
  last_message_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** CONTRACT §17's controls and custom data. */
  frozen: boolean;
  slow_mode_seconds: number;
  metadata: Record<string, unknown>;
  /** Rows in channel_members (kept by a trigger). */
  member_count: number;
  /** created_at as exact text, for cursors */
  created_key?: string;
}

export const CHANNEL_COLUMNS =
  'c.id, c.workspace_id, c.type, c.external_id, c.name, c.avatar_url, c.created_by, c.last_message_at, c.created_at, c.updated_at, c.frozen, c.slow_mode_seconds, c.metadata, c.member_count';

@Injectable()
export class ChannelsRepository {
  constructor(
    private readonly members: ChannelMembersRepository,
    private readonly settings: WorkspaceSettingsCache,
  ) {}

  /** By id (tried first) or external_id, always within the workspace. */
  async findByRef(
    m: EntityManager,
    workspaceId: string,
    ref: string,
    isId: boolean,
  ): Promise<ChannelRow | null> {
    let row: ChannelRow | undefined;
    if (isId) {
      const rows: ChannelRow[] = await m.query(
        `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.workspace_id = $1 AND c.id = $2`,
        [workspaceId, ref],
      );
      row = rows[0];
    }
    if (!row) {
      const rows: ChannelRow[] = await m.query(
        `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.workspace_id = $1 AND c.external_id = $2`,
        [workspaceId, ref],
      );
      row = rows[0];
    }
    return row ?? null;
  }

  async byId(m: EntityManager, workspaceId: string, id: string): Promise<ChannelRow | null> {
    const found: ChannelRow[] = await m.query(
      `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.workspace_id = $1 AND c.id = $2`,
      [workspaceId, id],
    );
    return found[0] ?? null;
  }

  /**
   * Inserts a channel; false when a unique key is taken: the direct channel of the pair, or the
   * external_id. Any unique key, not only the pair: two creates of one pair also race on its derived
   * external_id, and a violation of a key that is not the arbiter would be an error, not a skip.
   */
  async insert(
    m: EntityManager,
    c: {
      id: string;
      workspaceId: string;
      type: string;
      externalId: string;
      name: string | null;
      avatarUrl: string | null;
      createdBy: string | null;
      directPair: string | null;
      frozen: boolean;
      slowModeSeconds: number;
      metadata: Record<string, unknown>;
    },
  ): Promise<boolean> {
    const rows: unknown[] = await m.query(
      `INSERT INTO channels (id, workspace_id, type, external_id, name, avatar_url, created_by, direct_pair,
                             frozen, slow_mode_seconds, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        c.id,
        c.workspaceId,
        c.type,
        c.externalId,
        c.name,
        c.avatarUrl,
        c.createdBy,
        c.directPair,
        c.frozen,
        c.slowModeSeconds,
        JSON.stringify(c.metadata),
      ],
    );
    return rows.length === 1;
  }

  async findDirect(m: EntityManager, workspaceId: string, pair: string): Promise<ChannelRow | null> {
    const rows: ChannelRow[] = await m.query(
      `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.workspace_id = $1 AND c.direct_pair = $2`,
      [workspaceId, pair],
    );
    return rows[0] ?? null;
  }

  async update(
    m: EntityManager,
    id: string,
    patch: {
      name?: string | null;
      avatar_url?: string | null;
      frozen?: boolean;
      slow_mode_seconds?: number;
      metadata?: Record<string, unknown>;
    },
  ): Promise<void> {
    await m.query(
      `UPDATE channels SET name = CASE WHEN $2 THEN $3 ELSE name END,
         avatar_url = CASE WHEN $4 THEN $5 ELSE avatar_url END,
         frozen = COALESCE($6, frozen), slow_mode_seconds = COALESCE($7, slow_mode_seconds),
         metadata = COALESCE($8::jsonb, metadata), updated_at = now() WHERE id = $1`,
      [
        id,
        patch.name !== undefined,
        patch.name ?? null,
        patch.avatar_url !== undefined,
        patch.avatar_url ?? null,
        patch.frozen ?? null,
        patch.slow_mode_seconds ?? null,
        patch.metadata === undefined ? null : JSON.stringify(patch.metadata),
      ],
    );
  }

  async delete(m: EntityManager, id: string): Promise<void> {
    await m.query(`DELETE FROM channels WHERE id = $1`, [id]);
  }

  async list(
    m: EntityManager,
    workspaceId: string,
    f: {
      memberId?: string;
      type?: string;
      /** Top-level keys whose value must be exactly this string (CONTRACT §17). */
      metadata?: Record<string, string>;
      limit: number;
      before?: { createdAt: string; id: string };
    },
  ): Promise<ChannelRow[]> {
    const params: unknown[] = [workspaceId, f.limit + 1];
    const where = ['c.workspace_id = $1'];
    if (f.memberId) {
      params.push(f.memberId);
      where.push(
        `EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = $${params.length})`,
      );
    }
    if (f.type) {
      params.push(f.type);
      where.push(`c.type = $${params.length}`);
    }
    if (f.metadata && Object.keys(f.metadata).length) {
      // containment on the GIN (jsonb_path_ops) index: {"key": "value"} matches a string value only
      params.push(JSON.stringify(f.metadata));
      where.push(`c.metadata @> $${params.length}::jsonb`);
    }
    if (f.before) {
      params.push(f.before.createdAt, f.before.id);
      where.push(`(c.created_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    return m.query(
      `SELECT ${CHANNEL_COLUMNS}, ${exactTime('c.created_at')} AS created_key FROM channels c WHERE ${where.join(' AND ')} ORDER BY c.created_at DESC, c.id DESC LIMIT $2`,
      params,
    );
  }

  /** Channel objects of CONTRACT §6, with members, for a set of rows. */
  async views(m: EntityManager, rows: ChannelRow[]): Promise<ChannelPayload[]> {
    if (!rows.length) return [];
    const members = await this.members.members(
      m,
      rows.map((r) => r.id),
    );
    const creators: { id: string; external_id: string }[] = await m.query(
      `SELECT id, external_id FROM users WHERE id = ANY($1::uuid[])`,
      [rows.map((r) => r.created_by).filter((x): x is string => !!x)],
    );
    const creatorOf = new Map(creators.map((u) => [u.id, u.external_id]));
    const settingsOf = new Map<string, WorkspaceSettings>();
    for (const w of new Set(rows.map((r) => r.workspace_id)))
      settingsOf.set(w, await this.settings.get(w, m));
    const byChannel = new Map<string, MemberRow[]>();
    for (const mem of members) byChannel.set(mem.channel_id, [...(byChannel.get(mem.channel_id) ?? []), mem]);
    return rows.map((r) => {
      const list = byChannel.get(r.id) ?? [];
      return {
        id: r.id,
        type: r.type,
        external_id: r.external_id,
        name: r.name,
        avatar_url: r.avatar_url,
        member_count: list.length,
        large: isLarge(list.length, settingsOf.get(r.workspace_id)!),
        created_by: r.created_by ? (creatorOf.get(r.created_by) ?? null) : null,
        created_at: isoNotNull(r.created_at),
        updated_at: isoNotNull(r.updated_at),
        frozen: r.frozen,
        slow_mode_seconds: r.slow_mode_seconds,
        metadata: r.metadata,
        members: list.map((x) => ({
          external_id: x.external_id,
          role: r.type === 'direct' ? null : x.role,
          joined_at: isoNotNull(x.joined_at),
        })),
      };
    });
  }
}
