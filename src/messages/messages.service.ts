import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelRow, ChannelsRepository } from '../channels/channels.repository';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid, newId } from '../common/ids';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { EventLogService } from '../events/event-log.service';
import type { DomainEventMap, UserRef } from '../events/event-types';
import { RateLimiter } from '../infra/rate-limit/rate-limiter';
import { ActingUsers } from './acting-user.service';
import { SendMessageDto } from './dto/send-message.dto';
import { Draft, MessageRules } from './message-rules';
import { MessageModeration, ModerationVerdict } from './message-moderation';
import { freshView, MessageUserView, MessageView, MessageViews } from './message-view.service';
import { MessageHead, MessagesRepository } from './messages.repository';

export interface SendResult {
  message: MessageView;
  /** True when an idempotency key matched an earlier send: answer 200, fire nothing. */
  replayed: boolean;
}

const RATE_WINDOW_MS = 60_000;

/** Send, edit and unsend: SPEC.md's message lifecycle, with CONTRACT §7's check order. */
@Injectable()
export class MessagesService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: MessagesRepository,
    private readonly views: MessageViews,
    private readonly channels: ChannelsRepository,
    private readonly actingUsers: ActingUsers,
    private readonly limiter: RateLimiter,
    private readonly moderation: MessageModeration,
    private readonly rules: MessageRules,
    private readonly events: EventLogService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * auth (guard) → membership → idempotent replay → mute → size → rate → parent, mentions, attachment →
   * moderation → persist. A system message (backend only) has no sender and skips mute, rate and moderation.
   */
  async send(
    p: WorkspacePrincipal,
    channelRef: string,
    dto: SendMessageDto,
    system = false,
  ): Promise<SendResult> {
    if (!channelRef || channelRef.length > 200) throw AppError.notFound('Channel');
    // channel, sender, membership, mute and replay in one round trip; the checks below keep the contract's order
    const ctx = await this.repo.sendContext(
      this.db.manager,
      p.workspaceId,
      channelRef,
      isUuid(channelRef),
      system
        ? null
        : p.kind === 'user'
          ? { id: p.userId }
          : dto.user_external_id
            ? { externalId: dto.user_external_id }
            : null,
      dto.idempotency_key ?? null,
    );
    if (!ctx) throw AppError.notFound('Channel');
    const channel = ctx.channel;
    let sender: MessageUserView | null = null;
    if (system) {
      if (dto.user_external_id !== undefined)
        throw AppError.validation('user_external_id', 'a system message has no sender');
    } else {
      this.actingUsers.accept(p, dto.user_external_id, ctx.sender);
      if (!ctx.member || !ctx.sender) throw new AppError('NOT_A_MEMBER');
      sender = ctx.sender;
    }
    const viewer = { workspaceId: p.workspaceId, userId: sender?.id ?? null };
    const senderKey = sender?.id ?? 'system';

    if (ctx.replayId)
      return { message: await this.render(this.db.manager, viewer, ctx.replayId), replayed: true };
    if (sender && ctx.muted) throw new AppError('MUTED');
    const content = dto.content ?? '';
    this.rules.checkSize(content);
    if (sender) await this.checkRate(sender.id);

    const draft = await this.rules.validate(p.workspaceId, channel, dto, content, system);
    let verdict: ModerationVerdict = { content: draft.content };
    if (sender) {
      verdict = await this.moderation.evaluate({
        workspaceId: p.workspaceId,
        channelId: channel.id,
        channelExternalId: channel.external_id,
        userId: sender.id,
        content: draft.content,
        kind: 'send',
      });
    }
    return this.persist(
      p.workspaceId,
      channel,
      sender,
      senderKey,
      { ...draft, content: verdict.content },
      dto.idempotency_key ?? null,
      verdict,
    );
  }

  /** PATCH /v1/messages/:id: the author (or a backend key) within the edit window. */
  async edit(p: WorkspacePrincipal, id: string, content: string): Promise<MessageView> {
    const head = await this.writableHead(p, id);
    if (head.deleted_at) throw new AppError('MESSAGE_DELETED');
    const window = this.config.SERVICE_EDIT_WINDOW_SECONDS;
    if (p.kind === 'user' && window !== undefined && head.age_seconds > window)
      throw new AppError('EDIT_WINDOW_EXPIRED');
    if (!content.trim() && !head.attachment_url)
      throw AppError.validation('content', 'must not be empty without an attachment');
    this.rules.checkSize(content);
    let verdict: ModerationVerdict = { content };
    if (head.user_id && head.type !== 'system') {
      verdict = await this.moderation.evaluate({
        workspaceId: p.workspaceId,
        channelId: head.channel_id,
        channelExternalId: head.channel_external_id,
        userId: head.user_id,
        content,
        kind: 'edit',
        messageId: head.id,
      });
    }
    return this.db.transaction(async (m) => {
      const locked = await this.lockForWrite(m, p.workspaceId, head);
      if (locked.deleted_at) throw new AppError('MESSAGE_DELETED');
      await this.repo.edit(m, head.id, verdict.content);
      const view = await this.render(m, this.viewerOf(p), head.id);
      await this.events.append(m, {
        workspaceId: p.workspaceId,
        channelId: head.channel_id,
        type: 'message.updated',
        payload: {
          message: {
            id: view.id,
            channel_id: view.channel_id,
            channel_external_id: view.channel_external_id,
            content: view.content,
            edited_at: view.edited_at!,
          },
        },
      });
      await verdict.record?.(m, head.id);
      return view;
    });
  }

  /** DELETE /v1/messages/:id: blanks the message; a second unsend answers the same result and fires nothing. */
  async unsend(p: WorkspacePrincipal, id: string): Promise<MessageView> {
    const head = await this.writableHead(p, id);
    if (head.deleted_at) return this.render(this.db.manager, this.viewerOf(p), head.id);
    const window = this.config.SERVICE_UNSEND_WINDOW_SECONDS;
    if (p.kind === 'user' && window !== undefined && head.age_seconds > window)
      throw new AppError('UNSEND_WINDOW_EXPIRED');
    return this.db.transaction(async (m) => {
      const locked = await this.lockForWrite(m, p.workspaceId, head);
      if (!locked.deleted_at) {
        await this.repo.unsend(m, head.id);
      }
      const view = await this.render(m, this.viewerOf(p), head.id);
      if (!locked.deleted_at) {
        await this.events.append(m, {
          workspaceId: p.workspaceId,
          channelId: head.channel_id,
          type: 'message.deleted',
          payload: {
            message: {
              id: view.id,
              channel_id: view.channel_id,
              channel_external_id: view.channel_external_id,
              deleted_at: view.deleted_at!,
            },
          },
        });
      }
      return view;
    });
  }

  private viewerOf(p: WorkspacePrincipal) {
    return { workspaceId: p.workspaceId, userId: p.kind === 'user' ? p.userId : null };
  }

  /** The message for an edit or unsend: 404 outside the workspace, 403 for non-members and non-authors. */
  private async writableHead(p: WorkspacePrincipal, id: string): Promise<MessageHead> {
    if (!isUuid(id)) throw AppError.notFound('Message');
    const head = await this.repo.head(this.db.manager, p.workspaceId, id);
    if (!head) throw AppError.notFound('Message');
    if (p.kind === 'user') {
      if (!(await this.repo.isMember(this.db.manager, head.channel_id, p.userId)))
        throw new AppError('NOT_A_MEMBER');
      if (head.user_id !== p.userId) throw new AppError('NOT_AUTHOR');
    }
    return head;
  }

  /** Channel row first, then the message row: the same order as every other writer of a channel. */
  private async lockForWrite(m: EntityManager, workspaceId: string, head: MessageHead): Promise<MessageHead> {
    if (!(await this.channels.lock(m, head.channel_id))) throw AppError.notFound('Message');
    const locked = await this.repo.head(m, workspaceId, head.id, true);
    if (!locked) throw AppError.notFound('Message');
    return locked;
  }

  private async checkRate(userId: string): Promise<void> {
    const decision = await this.limiter.hit(
      `send:${userId}`,
      this.config.SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE,
      RATE_WINDOW_MS,
    );
    if (!decision.allowed) {
      throw new AppError(
        'RATE_LIMITED',
        'Too many messages; slow down',
        undefined,
        Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
      );
    }
  }

  /**
   * BEGIN → channel lock → insert (re-checking membership, advancing last_message_at) → events → COMMIT.
   * The answer is built from what the request holds (`freshView`), not read back.
   */
  private async persist(
    workspaceId: string,
    channel: ChannelRow,
    sender: MessageUserView | null,
    senderKey: string,
    draft: Draft,
    idempotencyKey: string | null,
    verdict: ModerationVerdict,
  ): Promise<SendResult> {
    const viewer = { workspaceId, userId: sender?.id ?? null };
    return this.db.transaction(async (m) => {
      if (!(await this.channels.lock(m, channel.id))) throw AppError.notFound('Channel');
      const inserted = await this.repo.insert(m, {
        id: newId(),
        workspaceId,
        channelId: channel.id,
        userId: sender?.id ?? null,
        senderKey,
        type: draft.type,
        content: draft.content,
        attachmentUrl: draft.attachmentUrl,
        attachment: draft.attachment,
        parentId: draft.parentId,
        idempotencyKey,
      });
      // membership may have changed since the first check; the insert re-checked it under the channel lock
      if (!inserted.member) throw new AppError('NOT_A_MEMBER');
      if (inserted.id === null) {
        // a concurrent send with the same key won: answer its message
        const existing = await this.repo.findIdByIdempotencyKey(m, workspaceId, senderKey, idempotencyKey!);
        if (!existing) throw new Error('idempotency conflict without a row');
        return { message: await this.render(m, viewer, existing), replayed: true };
      }
      const id = inserted.id;
      await this.repo.insertMentions(
        m,
        id,
        channel.id,
        draft.mentions.map((x) => x.user_id),
      );
      const view = freshView({
        id,
        channel,
        user: sender,
        content: draft.content,
        type: draft.type,
        attachment_url: draft.attachmentUrl,
        attachment: draft.attachment,
        parent_id: draft.parentId,
        quoted_message: draft.quote,
        mentions: draft.mentions,
        created_at: inserted.created_at!,
      });
      await this.events.append(m, {
        workspaceId,
        channelId: channel.id,
        type: 'message.created',
        payload: createdPayload(view),
      });
      if (view.mentions?.length) {
        await this.events.append(m, {
          workspaceId,
          channelId: channel.id,
          type: 'message.mentioned',
          payload: {
            message_id: view.id,
            channel_id: view.channel_id,
            channel_external_id: view.channel_external_id,
            by_user: userRef(view),
            mentions: view.mentions,
          },
        });
      }
      await verdict.record?.(m, id);
      return { message: view, replayed: false };
    });
  }

  private async render(
    m: EntityManager,
    viewer: { workspaceId: string; userId: string | null },
    id: string,
  ): Promise<MessageView> {
    const view = await this.views.renderOne(m, viewer, id);
    if (!view) throw AppError.notFound('Message');
    return view;
  }
}

function userRef(v: MessageView): UserRef | null {
  return v.user ? { id: v.user.id, external_id: v.user.external_id, name: v.user.name } : null;
}

/** SPEC.md's `message.created` data: parent_id/quoted_message only on replies, mentions only when there are some. */
export function createdPayload(v: MessageView): DomainEventMap['message.created'] {
  return {
    message: {
      id: v.id,
      channel_id: v.channel_id,
      channel_external_id: v.channel_external_id,
      user: userRef(v),
      content: v.content,
      type: v.type,
      attachment_url: v.attachment_url,
      created_at: v.created_at,
      ...(v.parent_id && v.quoted_message
        ? { parent_id: v.parent_id, quoted_message: v.quoted_message }
        : {}),
      ...(v.mentions?.length ? { mentions: v.mentions } : {}),
    },
  };
}
