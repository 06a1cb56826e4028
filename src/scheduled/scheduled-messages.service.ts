import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { actorRef, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid, newId } from '../common/ids';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { parseRfc3339 } from '../common/rfc3339';
import type { ScheduledMessageView } from '../contract/events';
import { onForeignKeyGone, rows } from '../infra/database/sql';
import { deleteDraft } from '../drafts/drafts.service';
import { CHANNEL_ORDER_LOCK_SEED } from '../events/channel-order';
import { EventNotifier } from '../events/event-notifier';
import { MessageViews } from '../messages/message-view.service';
import type { SendMessageDto } from '../messages/dto/send-message.dto';
import { MessageRules } from '../messages/message-rules';
import { MessageScheduling, ScheduleResult } from '../messages/message-scheduling';
import type { ScheduledListQueryDto, UpdateScheduledMessageDto } from './dto/scheduled.dto';
import { COLUMNS, FROM, ScheduledRow, viewOf } from './scheduled-views';

/** CONTRACT §25's bound on pending ones; and one on all of a user's, failed ones included. */
export const MAX_PENDING_PER_USER = 100;
export const MAX_SCHEDULED_PER_USER = 1000;
const MIN_AHEAD_MS = 1000;
const MAX_AHEAD_MS = 30 * 24 * 3600 * 1000;
/** The advisory lock a user's scheduling takes, so the per-user cap holds under concurrency. */
const SCHEDULED_CAP_LOCK_SEED = 2520;

/**
 * Scheduled messages (CONTRACT §25): a user's send kept until `scheduled_at`, seen by nobody else until
 * then. Scheduling checks what can be checked ahead (the acting user, membership, the idempotent replay,
 * size, the content's references); the send at the due time (ScheduledFiring) checks everything again,
 * in §7's order. At most 100 pending per user (and 1,000 in all), counted after the write under the
 * user's advisory lock. A change or a cancel takes the message back from a worker that holds it.
 */
@Injectable()
export class ScheduledMessagesService extends MessageScheduling {
  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly rules: MessageRules,
    private readonly views: MessageViews,
    private readonly notifier: EventNotifier,
  ) {
    super();
  }

  /**
   * POST /v1/channels/:id/messages and POST /v1/messages with `scheduled_at`: 202, a replay 200. In the
   * send's order: the acting user and membership, the idempotent replay (a scheduled message with the
   * key, or the message it became once sent: keys are one namespace with sends), then the time, size
   * and references. The user's draft of the channel or thread goes with it (CONTRACT §24).
   */
  async schedule(p: WorkspacePrincipal, channelRef: string, dto: SendMessageDto): Promise<ScheduleResult> {
    const key = dto.idempotency_key ?? null;
    const ctx = await this.writes.read(p, channelRef, 'send', {
      userExternalId: dto.user_external_id,
      idempotencyKey: key ?? undefined,
    });
    if (ctx.role === undefined) throw new AppError('NOT_A_MEMBER');
    const userId = ctx.actor!.id;
    if (key) {
      const earlier = await this.byKey(userId, key);
      if (earlier) return { scheduled_message: earlier, replayed: true };
      if (ctx.replayId) {
        const viewer = { workspaceId: p.workspaceId, userId: p.kind === 'user' ? userId : null };
        const message = await this.views.renderOne(this.db.manager, viewer, ctx.replayId);
        if (message) return { scheduled_message: null, message, replayed: true };
      }
    }
    const at = this.when(dto.scheduled_at!);
    const content = dto.content ?? '';
    this.rules.checkSize(content);
    const draft = await this.rules.validate(p.workspaceId, ctx.channel, dto, content, false);
    const id = newId();
    const outcome = await onForeignKeyGone(
      () =>
        this.db.transaction(async (m) => {
          // the channel's order lock shared (a draft save takes it so: the draft's deletion is ordered
          // with its saves), then the user's, under which the caps are counted
          await m.query(
            `SELECT pg_advisory_xact_lock_shared(hashtextextended($1::uuid::text, ${CHANNEL_ORDER_LOCK_SEED})),
                  pg_advisory_xact_lock(hashtextextended($2::text, ${SCHEDULED_CAP_LOCK_SEED}))`,
            [ctx.channel.id, userId],
          );
          const done = await rows<{ id: string }>(
            m,
            `INSERT INTO scheduled_messages (id, workspace_id, channel_id, user_id, by_user, run_hooks, content,
             attachment_url, parent_id, thread_id, show_in_channel, mention_ids, metadata, idempotency_key,
             scheduled_at, skip_previews, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::uuid[], $13::jsonb, $14, $15, $16,
                   clock_timestamp(), clock_timestamp())
           ON CONFLICT ON CONSTRAINT scheduled_messages_replay DO NOTHING RETURNING id`,
            [
              id,
              p.workspaceId,
              ctx.channel.id,
              userId,
              p.kind === 'user',
              p.kind === 'backend' && dto.run_hooks === true,
              draft.content,
              draft.attachmentUrl,
              draft.parentId,
              draft.threadId,
              draft.threadId !== null && draft.showInChannel,
              draft.mentions.map((x) => x.user_id),
              JSON.stringify(dto.metadata ?? {}),
              key,
              at,
              dto.skip_previews === true,
            ],
          );
          if (!done.length) return 'raced' as const; // a concurrent request with the same key stored it first
          await this.checkCaps(m, userId); // rolls the insert back
          return (await deleteDraft(m, p.workspaceId, userId, ctx.channel.id, draft.threadId))
            ? ('draft' as const)
            : ('stored' as const);
        }),
      () => AppError.notFound('Channel'), // the channel (or user) went between the checks and the insert
    );
    if (outcome === 'raced') {
      const winner = await this.byKey(userId, key!);
      if (winner) return { scheduled_message: winner, replayed: true };
      // the other request's scheduled message was cancelled (or sent) at once: the key is free again
      throw new AppError(
        'UNAVAILABLE',
        'The idempotency key was in use at the same time; retry',
        undefined,
        1,
      );
    }
    if (outcome === 'draft') this.notifier.committed();
    return { scheduled_message: await this.one(this.db.manager, userId, id), replayed: false };
  }

  /**
   * PATCH /v1/scheduled/:id: the merged message is checked as the send is; a new time re-arms a failed
   * one (counted against the pending cap). Changed through a user's token it becomes theirs to send.
   */
  async update(
    p: WorkspacePrincipal,
    id: string,
    dto: UpdateScheduledMessageDto,
  ): Promise<ScheduledMessageView> {
    const current = await this.own(p, id, dto.user_external_id);
    const ctx = await this.writes.read(p, current.channel_id, 'send', {
      userExternalId: dto.user_external_id,
    });
    if (ctx.role === undefined) throw new AppError('NOT_A_MEMBER');
    const at = dto.scheduled_at !== undefined ? this.when(dto.scheduled_at) : null;
    const content = dto.content ?? current.content;
    this.rules.checkSize(content);
    const merged: SendMessageDto = {
      content,
      attachment_url:
        dto.attachment_url === undefined
          ? (current.attachment_url ?? undefined)
          : (dto.attachment_url ?? undefined),
      parent_id: current.parent_id ?? undefined,
      thread_id: current.thread_id ?? undefined,
      show_in_channel: current.show_in_channel,
      mentions: dto.mentions ?? current.mentions,
    };
    const draft = await this.rules.validate(p.workspaceId, ctx.channel, merged, content, false);
    // the claim goes: a worker firing the old version finds it taken back and sends nothing
    const updated = await this.db.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtextextended($1::text, ${SCHEDULED_CAP_LOCK_SEED}))`, [
        current.user_id,
      ]);
      const changed = await rows<{ id: string }>(
        m,
        `UPDATE scheduled_messages s
            SET content = $3, attachment_url = $4, mention_ids = $5::uuid[], metadata = COALESCE($6::jsonb, s.metadata),
                scheduled_at = COALESCE($7::timestamptz, s.scheduled_at),
                status = CASE WHEN $7::timestamptz IS NULL THEN s.status ELSE 'pending' END,
                error = CASE WHEN $7::timestamptz IS NULL THEN s.error END,
                by_user = s.by_user OR $8, claim = NULL, claimed_until = NULL, attempts = 0,
                updated_at = clock_timestamp()
          WHERE s.id = $1 AND s.user_id = $2 RETURNING s.id`,
        [
          id,
          current.user_id,
          draft.content,
          draft.attachmentUrl,
          draft.mentions.map((x) => x.user_id),
          dto.metadata === undefined ? null : JSON.stringify(dto.metadata),
          at,
          p.kind === 'user',
        ],
      );
      if (changed.length && at !== null) await this.checkCaps(m, current.user_id);
      return changed.length > 0;
    });
    if (!updated) throw AppError.notFound('Scheduled message'); // sent or cancelled meanwhile
    return this.one(this.db.manager, current.user_id, id);
  }

  /** 409 SCHEDULED_LIMIT over 100 pending, or 1,000 in all (failed ones stay until changed or cancelled). */
  private async checkCaps(m: EntityManager, userId: string): Promise<void> {
    const [count] = await rows<{ pending: number; total: number }>(
      m,
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*)::int AS total
         FROM scheduled_messages WHERE user_id = $1`,
      [userId],
    );
    if (count!.pending > MAX_PENDING_PER_USER || count!.total > MAX_SCHEDULED_PER_USER)
      throw new AppError('SCHEDULED_LIMIT');
  }

  /** DELETE /v1/scheduled/:id. */
  async cancel(p: WorkspacePrincipal, id: string, userExternalId?: string): Promise<void> {
    const { user_id } = await this.own(p, id, userExternalId);
    const gone = await rows<{ id: string }>(
      this.db.manager,
      `DELETE FROM scheduled_messages WHERE id = $1 AND user_id = $2 RETURNING id`,
      [id, user_id],
    );
    if (!gone.length) throw AppError.notFound('Scheduled message');
  }

  /** GET /v1/me/scheduled and GET /v1/users/:external_id/scheduled: soonest first. */
  async list(userId: string, q: ScheduledListQueryDto) {
    const limit = q.limit ?? 50;
    const cursor = q.before ? decodeTimeIdCursor(q.before) : undefined;
    const found = await rows<ScheduledRow>(
      this.db.manager,
      `SELECT ${COLUMNS} FROM ${FROM}
        WHERE s.user_id = $1 AND ($2::text IS NULL OR c.external_id = $2 OR c.id = $3::uuid)
          AND ($4::timestamptz IS NULL OR (s.scheduled_at, s.id) > ($4::timestamptz, $5::uuid))
        ORDER BY s.scheduled_at, s.id LIMIT $6`,
      [
        userId,
        q.channel ?? null,
        q.channel && isUuid(q.channel) ? q.channel : null,
        cursor?.key ?? null,
        cursor?.id ?? null,
        limit + 1,
      ],
    );
    const page = pageOf(found, limit, (r) => [r.list_key, r.id]);
    return {
      scheduled_messages: page.items.map(viewOf),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /** GET /v1/users/:external_id/scheduled: 404 for a user not in the workspace. */
  async listOf(workspaceId: string, externalId: string, q: ScheduledListQueryDto) {
    const [user] = await rows<{ id: string }>(
      this.db.manager,
      `SELECT id FROM users WHERE workspace_id = $1 AND external_id = $2`,
      [workspaceId, externalId],
    );
    if (!user) throw AppError.notFound('User');
    return this.list(user.id, q);
  }

  /** A scheduled_at as stored: an RFC 3339 time 1 s to 30 days ahead (else 400). */
  private when(value: string): string {
    const instant = parseRfc3339(value);
    const ahead = instant ? Date.parse(instant.utc) - Date.now() : NaN;
    if (!instant || !(ahead >= MIN_AHEAD_MS && ahead <= MAX_AHEAD_MS))
      throw AppError.validation('scheduled_at', 'must be an RFC 3339 time 1 second to 30 days ahead');
    return instant.utc;
  }

  /** The acting user's scheduled message (CONTRACT §3's acting-user rule): another user's, or none, is 404. */
  private async own(
    p: WorkspacePrincipal,
    id: string,
    userExternalId: string | undefined,
  ): Promise<ScheduledMessageView & { user_id: string }> {
    const actor = actorRef(p, { kind: 'acting', userExternalId });
    const found = isUuid(id)
      ? await rows<ScheduledRow & { user_id: string }>(
          this.db.manager,
          `SELECT ${COLUMNS}, s.user_id FROM ${FROM} JOIN users u ON u.id = s.user_id
            WHERE s.id = $1 AND s.workspace_id = $2 AND (u.id = $3::uuid OR u.external_id = $4)`,
          [
            id,
            p.workspaceId,
            actor && 'id' in actor ? actor.id : null,
            actor && 'externalId' in actor ? actor.externalId : null,
          ],
        )
      : [];
    if (!found[0]) throw AppError.notFound('Scheduled message');
    return { ...viewOf(found[0]), user_id: found[0].user_id };
  }

  private async byKey(userId: string, key: string): Promise<ScheduledMessageView | null> {
    const [row] = await rows<ScheduledRow>(
      this.db.manager,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE s.user_id = $1 AND s.idempotency_key = $2`,
      [userId, key],
    );
    return row ? viewOf(row) : null;
  }

  private async one(m: EntityManager, userId: string, id: string): Promise<ScheduledMessageView> {
    const [row] = await rows<ScheduledRow>(
      m,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE s.user_id = $1 AND s.id = $2`,
      [userId, id],
    );
    if (!row) throw AppError.notFound('Scheduled message'); // sent or cancelled meanwhile
    return viewOf(row);
  }
}
