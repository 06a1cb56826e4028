import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { childrenOf, Inc, Metrics } from '../ops/metrics';
import { MODERATION_RULES } from '../workspaces/workspace-settings';

/** CONTRACT §19: the resolutions of a flag review entry. */
export const REVIEW_ACTIONS = ['dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

/** What automatic moderation did (flag, mask, reject, auto_mute), or how a flag review was resolved. */
export const AUDIT_ACTIONS = ['flag', 'mask', 'reject', 'auto_mute', ...REVIEW_ACTIONS] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The `rule` of a row that records a flag review's resolution (automatic rows name the rule that matched). */
export const REVIEW_RULE = 'review';

/** Values of the trail's `rule`: automatic moderation's rules, and `review`. */
export const AUDIT_RULES = [...MODERATION_RULES, REVIEW_RULE] as const;

export interface AuditRow {
  id: string;
  /** Null for a resolution of a user's review entry. */
  channel_id: string | null;
  /** Null for a resolution about a message whose author was deleted. */
  user_id: string | null;
  message_id: string | null;
  rule: string;
  action: AuditAction;
  excerpt: string;
  created_at: Date;
}

export interface NewAuditRow {
  id: string;
  workspaceId: string;
  channelId: string | null;
  channelExternalId: string | null;
  userId: string | null;
  messageId: string | null;
  rule: string;
  action: AuditAction;
  excerpt: string;
}

export interface AuditFilter {
  userExternalId?: string;
  /** Rows of this channel id. */
  channelId?: string;
  /** A channel that no longer exists: rows whose stored id or external id is this value. */
  channelRef?: string;
  rule?: string;
  beforeId?: string;
  limit: number;
}

const COLUMNS = `id, channel_id, user_id, message_id, rule, action, excerpt, created_at`;

@Injectable()
export class ModerationAuditRepository {
  /** chat_moderation_actions_total, by action */
  private readonly counted: { of: (action: string) => Inc };

  constructor(
    private readonly db: DataSource,
    metrics: Metrics,
  ) {
    this.counted = childrenOf(metrics.moderationActions, 'action', AUDIT_ACTIONS);
  }

  /**
   * In the caller's transaction; the user's external id is copied so the trail outlives the user. Each
   * row counts as an action (chat_moderation_actions_total) once written, before that transaction commits.
   */
  async insert(m: EntityManager, rows: readonly NewAuditRow[]): Promise<void> {
    if (!rows.length) return;
    await m.query(
      `INSERT INTO moderation_audit
         (id, workspace_id, channel_id, channel_external_id, user_id, user_external_id, message_id, rule, action, excerpt)
       SELECT r.id, r.workspace_id, r.channel_id, r.channel_external_id, r.user_id,
              COALESCE((SELECT u.external_id FROM users u WHERE u.id = r.user_id), ''),
              r.message_id, r.rule, r.action, r.excerpt
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::text[])
         AS r(id, workspace_id, channel_id, channel_external_id, user_id, message_id, rule, action, excerpt)`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.workspaceId),
        rows.map((r) => r.channelId),
        rows.map((r) => r.channelExternalId),
        rows.map((r) => r.userId),
        rows.map((r) => r.messageId),
        rows.map((r) => r.rule),
        rows.map((r) => r.action),
        rows.map((r) => r.excerpt),
      ],
    );
    for (const r of rows) this.counted.of(r.action).inc();
  }

  /** Newest first (ids are UUIDv7), `limit` rows. */
  async list(workspaceId: string, f: AuditFilter): Promise<AuditRow[]> {
    const where = ['workspace_id = $1'];
    const params: unknown[] = [workspaceId];
    const add = (sql: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (f.userExternalId !== undefined) add((n) => `user_external_id = ${n}`, f.userExternalId);
    if (f.channelId !== undefined) add((n) => `channel_id = ${n}::uuid`, f.channelId);
    if (f.channelRef !== undefined)
      add((n) => `(channel_id::text = ${n} OR channel_external_id = ${n})`, f.channelRef);
    if (f.rule !== undefined) add((n) => `rule = ${n}`, f.rule);
    if (f.beforeId !== undefined) add((n) => `id < ${n}::uuid`, f.beforeId);
    params.push(f.limit);
    return this.db.query(
      `SELECT ${COLUMNS} FROM moderation_audit WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
  }
}
