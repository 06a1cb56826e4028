import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { BansService } from '../bans/bans.service';
import { ChannelWrites } from '../channels/writes';
import type { BackendPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid, newId } from '../common/ids';
import { isExactTime } from '../common/keyset';
import { decodeCursor, pageOf } from '../common/pagination';
import { isoNotNull } from '../common/time';
import { MessageViews } from '../messages/message-view.service';
import type { MessageView } from '../contract/events';
import { MessagesService } from '../messages/messages.service';
import {
  ModerationAuditRepository,
  REVIEW_RULE,
  ReviewAction,
} from '../moderation/moderation-audit.repository';
import { excerptAround } from '../moderation/rules/spans';
import type { UserView } from '../users/user.view';
import { FlagQueueQueryDto, ResolveFlagDto } from './dto/flag.dto';
import { FlagsRepository, LockedReview, ReviewCursor, ReviewRow, ReviewStatus } from './flags.repository';

/** One entry of the review queue (CONTRACT §19). */
export interface FlagEntryView {
  id: string;
  target_type: 'message' | 'user';
  message?: MessageView;
  user?: UserView;
  flag_count: number;
  reasons: string[];
  first_flagged_at: string;
  last_flagged_at: string;
  status: ReviewStatus;
  resolution?: { action: ReviewAction; resolved_at: string; duration_seconds: number | null };
}

export interface FlagEntryPage {
  flags: FlagEntryView[];
  has_more: boolean;
  next_cursor: string | null;
}

const DEFAULT_LIMIT = 50;
const BACKEND = (workspaceId: string) => ({ workspaceId, userId: null });

/**
 * The review queue (backend key): one entry per flagged target and review cycle, and its resolutions.
 * A resolution, its effect and its audit row commit in one transaction; the entry is locked first, so of
 * two concurrent resolutions one acts and the other answers the entry as resolved.
 */
@Injectable()
export class FlagReviewsService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: FlagsRepository,
    private readonly views: MessageViews,
    private readonly writes: ChannelWrites,
    private readonly messages: MessagesService,
    private readonly audit: ModerationAuditRepository,
    private readonly bans: BansService,
  ) {}

  /** GET /v1/moderation/flags: open entries oldest first, resolved ones most recently resolved first. */
  async list(p: BackendPrincipal, q: FlagQueueQueryDto): Promise<FlagEntryPage> {
    const status = q.status ?? 'open';
    const limit = q.limit ?? DEFAULT_LIMIT;
    const cursor = q.before !== undefined ? cursorOf(status, q.before) : null;
    const rows = await this.repo.page(this.db.manager, p.workspaceId, status, cursor, limit + 1);
    const page = pageOf(rows, limit, (r) => (status === 'open' ? [r.id] : [r.resolved_key!, r.id]));
    return {
      flags: await this.render(this.db.manager, p.workspaceId, page.items),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /**
   * POST /v1/moderation/flags/:id/resolve. Resolving a resolved entry changes nothing and answers it as
   * it is (200), like a second unsend.
   */
  async resolve(p: BackendPrincipal, id: string, dto: ResolveFlagDto): Promise<FlagEntryView> {
    const entry = isUuid(id) ? await this.repo.find(this.db.manager, p.workspaceId, id) : null;
    if (!entry) throw AppError.notFound('Flag');
    const ban = dto.action === 'ban_user' || dto.action === 'shadow_ban_user';
    if (dto.duration_seconds !== undefined && !ban)
      throw AppError.validation('duration_seconds', 'is only for ban_user and shadow_ban_user');
    if (dto.action === 'unsend_message' && entry.target_type !== 'message')
      throw AppError.validation('action', 'unsend_message is only for message entries');
    if (entry.status === 'open') {
      if (dto.action === 'unsend_message') await this.unsendAndResolve(p, entry);
      else await this.db.transaction((m) => this.resolveIn(m, p.workspaceId, id, dto));
    }
    const now = await this.repo.find(this.db.manager, p.workspaceId, id);
    if (!now) throw AppError.notFound('Flag');
    return (await this.render(this.db.manager, p.workspaceId, [now]))[0]!;
  }

  /** The one unsend, in the message's channel write session, with the resolution and its audit row. */
  private async unsendAndResolve(p: BackendPrincipal, entry: ReviewRow): Promise<void> {
    const ctx = await this.writes.open(p, null, 'unsend', { messageId: entry.message_id! });
    await this.writes.write(ctx, async (s) => {
      const locked = await this.repo.lockOpen(s.m, p.workspaceId, entry.id);
      if (!locked) return; // resolved meanwhile
      await this.messages.unsendIn(s, locked.message_id!, BACKEND(p.workspaceId));
      await this.finish(s.m, p.workspaceId, locked, 'unsend_message', null);
    });
  }

  private async resolveIn(
    m: EntityManager,
    workspaceId: string,
    id: string,
    dto: ResolveFlagDto,
  ): Promise<void> {
    const locked = await this.repo.lockOpen(m, workspaceId, id);
    if (!locked) return; // resolved meanwhile
    switch (dto.action) {
      case 'dismiss':
        break;
      case 'ban_user':
      case 'shadow_ban_user':
        // the flagged user, or the message's author: workspace-wide, replacing a ban they already have
        if (!locked.user_id) throw AppError.notFound('User');
        await this.bans.banIn(m, workspaceId, {
          userId: locked.user_id,
          channelId: null,
          reason: `flag review ${locked.id}`,
          durationSeconds: dto.duration_seconds ?? null,
          shadow: dto.action === 'shadow_ban_user',
          byUserId: null,
        });
        break;
      case 'unsend_message':
        throw new Error('unsend_message runs in the channel write session');
    }
    await this.finish(m, workspaceId, locked, dto.action, dto.duration_seconds ?? null);
  }

  /** Marks the entry resolved and writes the audit row, keeping an excerpt of what the message said. */
  private async finish(
    m: EntityManager,
    workspaceId: string,
    locked: LockedReview,
    action: ReviewAction,
    durationSeconds: number | null,
  ): Promise<void> {
    await this.repo.resolve(m, locked.id, action, durationSeconds);
    await this.audit.insert(m, [
      {
        id: newId(),
        workspaceId,
        channelId: locked.channel_id,
        channelExternalId: locked.channel_external_id,
        userId: locked.user_id,
        messageId: locked.message_id,
        rule: REVIEW_RULE,
        action,
        excerpt: locked.content ? excerptAround(locked.content, { start: 0, end: 0 }) : '',
      },
    ]);
  }

  /** Entries with their messages rendered for a backend key in one statement. */
  private async render(m: EntityManager, workspaceId: string, rows: ReviewRow[]): Promise<FlagEntryView[]> {
    const ids = rows.flatMap((r) => (r.message_id ? [r.message_id] : []));
    const messages = new Map((await this.views.render(m, BACKEND(workspaceId), ids)).map((v) => [v.id, v]));
    return rows.map((r) => entryView(r, r.message_id ? messages.get(r.message_id) : undefined));
  }
}

function entryView(r: ReviewRow, message: MessageView | undefined): FlagEntryView {
  return {
    id: r.id,
    target_type: r.target_type,
    ...(message ? { message } : {}),
    ...(r.u_id
      ? {
          user: {
            id: r.u_id,
            external_id: r.u_external_id!,
            name: r.u_name,
            avatar_url: r.u_avatar_url,
            metadata: r.u_metadata ?? {},
            created_at: isoNotNull(r.u_created_at!),
            updated_at: isoNotNull(r.u_updated_at!),
          },
        }
      : {}),
    flag_count: r.flag_count,
    reasons: r.reasons ?? [],
    first_flagged_at: isoNotNull(r.first_flagged_at),
    last_flagged_at: isoNotNull(r.last_flagged_at),
    status: r.status,
    ...(r.status === 'resolved'
      ? {
          resolution: {
            action: r.resolution_action!,
            resolved_at: isoNotNull(r.resolved_at!),
            duration_seconds: r.resolution_duration_seconds,
          },
        }
      : {}),
  };
}

function cursorOf(status: ReviewStatus, value: string): ReviewCursor {
  if (status === 'open') {
    const [id] = decodeCursor(value, ['string']) as [string];
    if (!isUuid(id)) throw AppError.validation('before', 'is not a valid cursor');
    return { status, id };
  }
  const [resolvedKey, id] = decodeCursor(value, ['string', 'string']) as [string, string];
  if (!isExactTime(resolvedKey) || !isUuid(id)) throw AppError.validation('before', 'is not a valid cursor');
  return { status, resolvedKey, id };
}
