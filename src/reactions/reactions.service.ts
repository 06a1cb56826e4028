import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelsRepository } from '../channels/channels.repository';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { EventLogService } from '../events/event-log.service';
import type { ReactionPayload } from '../events/event-types';
import { ActingUser, ActingUsers } from '../messages/acting-user.service';
import { MessageView, MessageViews } from '../messages/message-view.service';
import { MessageHead, MessagesRepository } from '../messages/messages.repository';
import { isReactionEmoji, EMOJI_RULE } from './emoji';

/**
 * One reaction per user per message (the primary key says so). Every change runs under the channel
 * row's lock, then the message row's, so a replacement's "removed old, added new" pair is one
 * consistent step in the channel's event sequence however many requests race.
 */
@Injectable()
export class ReactionsService {
  constructor(
    private readonly db: DataSource,
    private readonly messages: MessagesRepository,
    private readonly channels: ChannelsRepository,
    private readonly actingUsers: ActingUsers,
    private readonly views: MessageViews,
    private readonly events: EventLogService,
  ) {}

  /** Adds or replaces the user's reaction; the same emoji again changes nothing. */
  async add(
    p: WorkspacePrincipal,
    messageId: string,
    emoji: string,
    userExternalId?: string,
  ): Promise<MessageView> {
    const { head, user } = await this.open(p, messageId, userExternalId);
    if (head.deleted_at) throw new AppError('MESSAGE_DELETED');
    return this.db.transaction(async (m) => {
      const locked = await this.lock(m, p.workspaceId, head);
      if (locked.deleted_at) throw new AppError('MESSAGE_DELETED');
      const rows: { emoji: string }[] = await m.query(
        `SELECT emoji FROM reactions WHERE message_id = $1 AND user_id = $2`,
        [head.id, user.id],
      );
      const old = rows[0]?.emoji ?? null;
      if (old !== emoji) {
        await m.query(
          `INSERT INTO reactions (message_id, user_id, channel_id, emoji, created_at) VALUES ($1, $2, $3, $4, clock_timestamp())
           ON CONFLICT (message_id, user_id) DO UPDATE SET emoji = EXCLUDED.emoji, created_at = EXCLUDED.created_at`,
          [head.id, user.id, head.channel_id, emoji],
        );
        if (old !== null) await this.append(m, p.workspaceId, 'message.reaction.removed', head, user, old);
        await this.append(m, p.workspaceId, 'message.reaction.added', head, user, emoji);
      }
      return this.render(m, p.workspaceId, user, head.id);
    });
  }

  /** Removes the user's reaction if it is this emoji; otherwise a no-op. */
  async remove(
    p: WorkspacePrincipal,
    messageId: string,
    emoji: string,
    userExternalId?: string,
  ): Promise<MessageView> {
    if (!isReactionEmoji(emoji)) throw AppError.validation('emoji', EMOJI_RULE);
    const { head, user } = await this.open(p, messageId, userExternalId);
    return this.db.transaction(async (m) => {
      await this.lock(m, p.workspaceId, head);
      const removed: unknown[] = await m.query(
        `WITH d AS (DELETE FROM reactions WHERE message_id = $1 AND user_id = $2 AND emoji = $3 RETURNING 1) SELECT * FROM d`,
        [head.id, user.id, emoji],
      );
      if (removed.length) await this.append(m, p.workspaceId, 'message.reaction.removed', head, user, emoji);
      return this.render(m, p.workspaceId, user, head.id);
    });
  }

  /** 404 outside the workspace; the acting user must be a member of the message's channel. */
  private async open(
    p: WorkspacePrincipal,
    messageId: string,
    userExternalId?: string,
  ): Promise<{ head: MessageHead; user: ActingUser }> {
    if (!isUuid(messageId)) throw AppError.notFound('Message');
    const head = await this.messages.head(this.db.manager, p.workspaceId, messageId);
    if (!head) throw AppError.notFound('Message');
    const user = await this.actingUsers.resolve(p, userExternalId);
    if (!(await this.messages.isMember(this.db.manager, head.channel_id, user.id)))
      throw new AppError('NOT_A_MEMBER');
    return { head, user };
  }

  private async lock(m: EntityManager, workspaceId: string, head: MessageHead): Promise<MessageHead> {
    if (!(await this.channels.lock(m, head.channel_id))) throw AppError.notFound('Message');
    const locked = await this.messages.head(m, workspaceId, head.id, true);
    if (!locked) throw AppError.notFound('Message');
    return locked;
  }

  private async append(
    m: EntityManager,
    workspaceId: string,
    type: 'message.reaction.added' | 'message.reaction.removed',
    head: MessageHead,
    user: ActingUser,
    emoji: string,
  ): Promise<void> {
    const payload: ReactionPayload = {
      reaction: {
        message_id: head.id,
        channel_id: head.channel_id,
        channel_external_id: head.channel_external_id,
        user_id: user.id,
        emoji,
      },
    };
    await this.events.append(m, { workspaceId, channelId: head.channel_id, type, payload });
  }

  private async render(
    m: EntityManager,
    workspaceId: string,
    user: ActingUser,
    id: string,
  ): Promise<MessageView> {
    const view = await this.views.renderOne(m, { workspaceId, userId: user.id }, id);
    if (!view) throw AppError.notFound('Message');
    return view;
  }
}
