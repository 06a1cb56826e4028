import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  ChannelWriteContext,
  ChannelWriteSession,
  ChannelWrites,
  OutgoingEvent,
  PENDING_MESSAGE_ID,
  refusalOf,
  SendOutcome,
} from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError, httpStatusOf } from '../common/errors/app-error';
import { toAppError } from '../common/errors/to-app-error';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { RateLimiter } from '../infra/rate-limit/rate-limiter';
import { SendMessageDto } from './dto/send-message.dto';
import { Draft, MessageRules } from './message-rules';
import { MessageModeration, ModerationVerdict } from './message-moderation';
import {
  createdPayload,
  freshView,
  ownThreadState,
  MessageViewer,
  MessageViews,
  PENDING_TIME,
  userRef,
} from './message-view.service';
import type { MessageType, MessageUserView, MessageView } from '../contract/events';
import { MessagesRepository } from './messages.repository';
import { MessageUnsend } from './message-unsend';
import { PreSendHook } from './pre-send-hook';
import { newId } from '../common/ids';
import { linkedUrls } from '../previews/linked-urls';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import type { PreSendHookSettings } from '../workspaces/workspace-settings';
import { WorkspacesService } from '../workspaces/workspaces.service';
import type { ScheduledSend } from './message-scheduling';
import { Metrics, SendOutcome as SendMetric, Transport } from '../ops/metrics';

/** What a send of a special kind adds (a poll, CONTRACT §28). */
export interface SendAddition {
  /** The message's type, instead of the one its attachment makes. */
  type: MessageType;
  /**
   * Given the content as it will be stored (moderation may have masked it) and who sends where: the
   * answer's extra fields (also in `message.created`) and the rows to write in the send's transaction.
   */
  build(
    content: string,
    at: { channelId: string; channelExternalId: string; user: MessageUserView },
  ): Promise<{ fields: Partial<MessageView>; write(m: EntityManager, messageId: string): Promise<void> }>;
}

/** How a send is made besides its body. */
export interface SendOptions {
  /** A backend's system message (no sender). */
  system?: boolean;
  transport?: Transport;
  /** A scheduled message firing (CONTRACT §25). */
  scheduled?: ScheduledSend;
  addition?: SendAddition;
}

export interface SendResult {
  message: MessageView;
  /** True when an idempotency key matched an earlier send: answer 200, fire nothing. */
  replayed: boolean;
}

const RATE_WINDOW_MS = 60_000;
/** Stands in for the stored instant in a new message's events until chat_send_message sets it. */

/** Send, edit and unsend: SPEC.md's message lifecycle, with CONTRACT §7's check order. */
@Injectable()
export class MessagesService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: MessagesRepository,
    private readonly views: MessageViews,
    private readonly writes: ChannelWrites,
    private readonly limiter: RateLimiter,
    private readonly moderation: MessageModeration,
    private readonly rules: MessageRules,
    private readonly unsends: MessageUnsend,
    private readonly metrics: Metrics,
    private readonly hook: PreSendHook,
    private readonly workspaces: WorkspacesService,
    private readonly http: SafeHttpClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * auth (guard) → membership → idempotent replay → mute → size → rate → parent, mentions, attachment →
   * moderation → persist. A system message (backend only) has no sender and skips mute, rate and moderation.
   * Channel, sender, membership, mute and replay are read in one round trip; the persist is one statement.
   * Counted and timed by type, outcome and `transport` (chat_messages_sent_total, chat_message_send_duration_seconds).
   * A scheduled message firing (`scheduled`, CONTRACT §25) skips the rate limit and slow mode and is
   * persisted in one transaction with its ScheduledSend steps.
   */
  async send(
    p: WorkspacePrincipal,
    channelRef: string,
    dto: SendMessageDto,
    { system = false, transport = 'rest', scheduled, addition }: SendOptions = {},
  ): Promise<SendResult> {
    const started = performance.now();
    const type = system
      ? 'system'
      : dto.thread_id !== undefined || dto.parent_id !== undefined
        ? 'reply'
        : 'regular';
    let outcome: SendMetric = 'failed';
    try {
      const result = await this.sendChecked(p, channelRef, dto, system, scheduled, addition);
      outcome = result.replayed ? 'replayed' : 'created';
      return { ...result, message: answerView(p.kind, result.message) };
    } catch (e) {
      const status = httpStatusOf(toAppError(e).error.code);
      outcome =
        status >= 500
          ? 'failed'
          : status === 403 || status === 422 || status === 429
            ? 'rejected'
            : 'invalid';
      throw e;
    } finally {
      this.metrics.sendDone(type, outcome, transport, (performance.now() - started) / 1000);
    }
  }

  private async sendChecked(
    p: WorkspacePrincipal,
    channelRef: string,
    dto: SendMessageDto,
    system: boolean,
    scheduled: ScheduledSend | undefined,
    addition: SendAddition | undefined,
  ): Promise<SendResult> {
    const ctx = await this.writes.read(p, channelRef, system ? 'send_system' : 'send', {
      userExternalId: dto.user_external_id,
      idempotencyKey: dto.idempotency_key,
    });
    const channel = ctx.channel;
    if (system && dto.user_external_id !== undefined)
      throw AppError.validation('user_external_id', 'a system message has no sender');
    const sender: MessageUserView | null = system ? null : ctx.actor;
    if (this.writes.enforce(ctx) === 'replay') {
      const viewer = { workspaceId: p.workspaceId, userId: sender?.id ?? null };
      return { message: await this.render(this.db.manager, viewer, ctx.replayId!), replayed: true };
    }
    const content = dto.content ?? '';
    this.rules.checkSize(content);
    if (sender && !scheduled) await this.checkRate(sender.id);

    let draft = await this.rules.validate(p.workspaceId, channel, dto, content, system);
    let metadata = dto.metadata;
    // CONTRACT §27: a user's send (a backend's with run_hooks) meets the pre-send hook here, after
    // validation and before moderation; the hook is told the id the message will get (not for a poll:
    // moderation checks its question and options)
    const hook = sender && !addition ? await this.hookOf(p, dto) : null;
    let messageId: string | null = null;
    if (hook && sender) {
      messageId = newId();
      const told = await this.hook.call(
        hook,
        p.workspaceId,
        {
          id: messageId,
          channel_id: channel.id,
          channel_external_id: channel.external_id,
          content: draft.content,
          type: draft.type,
          attachment_url: draft.attachmentUrl,
          parent_id: draft.parentId,
          thread_id: draft.threadId,
          show_in_channel: draft.threadId !== null && draft.showInChannel,
          mentions: draft.mentions,
          metadata: metadata ?? {},
        },
        sender.id,
        channel,
      );
      if (told.action === 'modify') {
        const changed: SendMessageDto = {
          ...dto,
          content: told.content ?? draft.content,
          mentions: told.mentions ?? dto.mentions,
        };
        try {
          this.rules.checkSize(changed.content!);
          draft = await this.rules.validate(p.workspaceId, channel, changed, changed.content!, false);
          metadata = told.metadata ?? metadata;
        } catch (e) {
          if (!(e instanceof AppError)) throw e;
          this.hook.failed(hook); // an invalid modification: on_failure (allow keeps the original)
        }
      }
    }
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
    const added = await addition?.build(verdict.content, {
      channelId: channel.id,
      channelExternalId: channel.external_id,
      user: sender!,
    });
    return this.persist(
      ctx,
      sender,
      { ...draft, content: verdict.content, type: addition?.type ?? draft.type },
      {
        id: messageId,
        idempotencyKey: dto.idempotency_key ?? null,
        metadata,
        // a scheduled firing's frozen rule is write()'s, under the same lock; slow mode does not apply
        byUser: !system && p.kind === 'user' && !scheduled,
        skipPreviews: dto.skip_previews === true,
      },
      verdict,
      scheduled,
      added,
    );
  }

  /** PATCH /v1/messages/:id: the author (or a backend key) within the edit window. */
  async edit(
    p: WorkspacePrincipal,
    id: string,
    content: string | undefined,
    metadata?: Record<string, unknown>,
  ): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'edit', { messageId: id });
    const head = ctx.message!;
    if (content === undefined) {
      if (metadata === undefined)
        throw AppError.validation('content', 'give the new content, metadata or both');
    } else if (head.type === 'poll') {
      throw AppError.validation('content', "a poll's question cannot be changed (its metadata can)");
    } else if (!content.trim() && !head.attachment_url) {
      throw AppError.validation('content', 'must not be empty without an attachment');
    }
    if (content !== undefined) this.rules.checkSize(content);
    let verdict: { content: string | undefined; record?: ModerationVerdict['record'] } = { content };
    if (content !== undefined && head.user_id && head.type !== 'system') {
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
    return this.writes.write(ctx, async (s) => {
      // CONTRACT §26: previews of links no longer written go with the edit; new links are the worker's
      await this.repo.edit(
        s.m,
        head.id,
        verdict.content ?? null,
        verdict.content === undefined ? null : linkedUrls(verdict.content),
        this.http.allowsPrivateNetworks,
        metadata,
      );
      const view = await this.render(s.m, this.viewerOf(p), head.id);
      await s.append('message.updated', {
        message: {
          id: view.id,
          channel_id: view.channel_id,
          channel_external_id: view.channel_external_id,
          content: view.content,
          metadata: view.metadata,
          previews: view.previews,
          edited_at: view.edited_at!,
        },
      });
      await verdict.record?.(s.m, head.id);
      return view;
    });
  }

  /**
   * DELETE /v1/messages/:id: blanks the message; a second unsend answers the same result and fires
   * nothing. A pinned message is unpinned in the same transaction (CONTRACT §16), announced by
   * `message.unpinned` right after `message.deleted`, so pin lists kept from events stay right.
   */
  async unsend(p: WorkspacePrincipal, id: string): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'unsend', { messageId: id });
    const head = ctx.message!;
    if (head.deleted_at) return this.render(this.db.manager, this.viewerOf(p), head.id);
    return this.writes.write(ctx, (s) => this.unsendIn(s, head.id, this.viewerOf(p)));
  }

  /**
   * The one unsend, inside the channel's write session (DELETE /v1/messages/:id, and a flag review's
   * `unsend_message`): blanks the message, unpins it and updates its thread's counters, with their
   * events (MessageUnsend, which an erasure runs for a batch); an already unsent message is answered as
   * it is and fires nothing. 404 if it is gone.
   */
  async unsendIn(s: ChannelWriteSession, messageId: string, viewer: MessageViewer): Promise<MessageView> {
    const { found } = await this.unsends.unsend(s, [messageId]);
    if (!found.length) throw AppError.notFound('Message');
    return this.render(s.m, viewer, messageId);
  }

  /** The workspace's pre-send hook when this send calls it: a user's own, or a backend's with `run_hooks`. */
  private async hookOf(p: WorkspacePrincipal, dto: SendMessageDto): Promise<PreSendHookSettings | null> {
    if (p.kind !== 'user' && dto.run_hooks !== true) return null;
    const hook = (await this.workspaces.settings(p.workspaceId)).pre_send_hook;
    return hook?.enabled ? hook : null;
  }

  private viewerOf(p: WorkspacePrincipal): MessageViewer {
    return { workspaceId: p.workspaceId, userId: p.kind === 'user' ? p.userId : null };
  }

  private async checkRate(userId: string): Promise<void> {
    const decision = await this.limiter.hit(
      `send:${userId}`,
      this.config.SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE,
      RATE_WINDOW_MS,
    );
    if (!decision.allowed) {
      this.metrics.limited.send.inc();
      throw new AppError(
        'RATE_LIMITED',
        'Too many messages; slow down',
        undefined,
        Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
      );
    }
  }

  /**
   * The message and its events in one statement (chat_send_message), which re-checks membership under
   * the channel's lock. Moderation's audit rows join it in one transaction when there are any. The
   * answer is built from what the request holds (`freshView`), not read back.
   */
  private async persist(
    ctx: ChannelWriteContext,
    sender: MessageUserView | null,
    draft: Draft,
    o: {
      id: string | null;
      idempotencyKey: string | null;
      metadata: Record<string, unknown> | undefined;
      byUser: boolean;
      skipPreviews: boolean;
    },
    verdict: ModerationVerdict,
    scheduled?: ScheduledSend,
    added?: Awaited<ReturnType<SendAddition['build']>>,
  ): Promise<SendResult> {
    const metadata = o.metadata && Object.keys(o.metadata).length ? o.metadata : null;
    const { channel, workspaceId } = ctx;
    // CONTRACT §19: a shadow-banned author's message reaches only them and the backend: no mention, no
    // thread counters (chat_send_message counts it nowhere), and webhooks see it marked
    const shadowed = sender !== null && ctx.ban === 'shadow';
    const pending: MessageView = freshView({
      id: PENDING_MESSAGE_ID,
      channel,
      user: sender,
      content: draft.content,
      type: draft.type,
      attachment_url: draft.attachmentUrl,
      attachment: draft.attachment,
      parent_id: draft.parentId,
      quoted_message: draft.quote,
      mentions: draft.mentions,
      thread_id: draft.threadId,
      show_in_channel: draft.showInChannel,
      metadata: metadata ?? {},
      created_at: PENDING_TIME,
    });
    Object.assign(pending, added?.fields);
    const created = createdPayload(pending);
    if (shadowed) created.message.shadowed = true;
    const events: OutgoingEvent[] = [
      { type: 'message.created', payload: created } satisfies OutgoingEvent<'message.created'>,
    ];
    if (pending.mentions?.length && !shadowed) {
      events.push({
        type: 'message.mentioned',
        payload: {
          message_id: pending.id,
          channel_id: pending.channel_id,
          channel_external_id: pending.channel_external_id,
          by_user: userRef(pending),
          mentions: pending.mentions,
        },
      } satisfies OutgoingEvent<'message.mentioned'>);
    }
    if (draft.threadId && !shadowed) {
      // the root's new counters: chat_send_message fills them in under the lock
      events.push({
        type: 'thread.updated',
        payload: {
          message: {
            id: draft.threadId,
            channel_id: channel.id,
            channel_external_id: channel.external_id,
            reply_count: 0,
            last_reply_at: null,
            thread_participants: [],
          },
        },
      } satisfies OutgoingEvent<'thread.updated'>);
    }
    const message = {
      id: o.id,
      keepDraft: scheduled !== undefined,
      userId: sender?.id ?? null,
      senderKey: sender?.id ?? 'system',
      type: draft.type,
      content: draft.content,
      attachmentUrl: draft.attachmentUrl,
      attachment: draft.attachment,
      parentId: draft.parentId,
      idempotencyKey: o.idempotencyKey,
      mentionIds: shadowed ? [] : draft.mentions.map((x) => x.user_id),
      threadId: draft.threadId,
      showInChannel: draft.showInChannel,
      metadata,
      byUser: o.byUser,
      shadowed,
    };
    // what else the send's transaction writes: moderation's audit, and how its links are previewed
    // (CONTRACT §26) when that is not the default: opted out, or under a policy that allows private targets
    const record = verdict.record;
    const previews = o.skipPreviews
      ? { skip: true, allowPrivate: false }
      : this.http.allowsPrivateNetworks && linkedUrls(draft.content).length
        ? { skip: false, allowPrivate: true }
        : null;
    const also =
      record || previews || added
        ? async (m: EntityManager, id: string) => {
            await record?.(m, id);
            if (previews) await this.repo.previewPolicy(m, id, previews);
            await added?.write(m, id);
          }
        : undefined;
    const out: SendOutcome = scheduled
      ? await this.writes.write(ctx, async (s) => {
          await scheduled.take(s.m);
          const sent = await s.sendMessage(message, events);
          // a refusal under the lock rolls the take back: the scheduled message stays, to be marked failed
          if (sent.outcome !== 'sent')
            throw sent.outcome === 'replay' ? new Error('replay') : refusalOf(sent);
          await also?.(s.m, sent.id);
          const view = { ...pending, id: sent.id, created_at: sent.created_at };
          await scheduled.sent(s.m, answerView(ctx.principal, view));
          return sent;
        })
      : also
        ? await this.writes.write(ctx, async (s) => {
            const sent = await s.sendMessage(message, events);
            if (sent.outcome === 'sent') await also(s.m, sent.id);
            return sent;
          })
        : await this.writes.send(ctx, message, events, (sent, stored) =>
            // a thread reply's root counters are only in the stored event: the log's publisher sends it
            draft.threadId
              ? null
              : {
                  workspaceId,
                  channelId: channel.id,
                  events: stored,
                  view: { ...pending, id: sent.id, created_at: sent.created_at },
                  authorId: sender?.id ?? null,
                  shadowed,
                  blockerIds: ctx.blockerIds,
                },
          );
    switch (out.outcome) {
      case 'sent':
        return { message: { ...pending, id: out.id, created_at: out.created_at }, replayed: false };
      case 'replay': // a concurrent send with the same key won: answer its message
        return {
          message: await this.render(this.db.manager, { workspaceId, userId: sender?.id ?? null }, out.id),
          replayed: true,
        };
      case 'slow_mode':
        this.metrics.limited.slow_mode.inc();
        throw refusalOf(out);
      case 'not_member':
      case 'gone':
      case 'frozen':
      case 'no_root':
        throw refusalOf(out);
    }
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

/**
 * The sent message as its sender's answer shows it: to a user, a new message (not a reply) carries their
 * own thread read state (CONTRACT §23: its author takes part, from the message on); a backend key never
 * sees one (a replay is rendered for the user it sends as).
 */
function answerView(kind: WorkspacePrincipal['kind'], view: MessageView): MessageView {
  if (kind !== 'user') {
    const { thread: _, ...rest } = view;
    return rest;
  }
  return view.thread_id || view.thread ? view : { ...view, thread: ownThreadState(view.created_at) };
}
