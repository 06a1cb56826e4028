import { Injectable } from '@nestjs/common';
import { ChannelWriteContext, ChannelWriteSession, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { MessageViews } from '../messages/message-view.service';
import type { MessageView } from '../contract/events';
import { ReactionsRepository } from './reactions.repository';
import { isReactionEmoji, EMOJI_RULE } from './emoji';

/**
 * One reaction per user per message (the primary key says so). Every change runs in the channel's
 * write session, with the message row locked, so a replacement's "removed old, added new" pair is one
 * consistent step in the channel's event sequence however many requests race.
 */
@Injectable()
export class ReactionsService {
  constructor(
    private readonly writes: ChannelWrites,
    private readonly reactions: ReactionsRepository,
    private readonly views: MessageViews,
  ) {}

  /** Adds or replaces the user's reaction; the same emoji again changes nothing. */
  async add(
    p: WorkspacePrincipal,
    messageId: string,
    emoji: string,
    userExternalId?: string,
  ): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'react', { messageId, userExternalId });
    return this.write(ctx, async (s, actorId) => {
      const old = await this.reactions.put(s.m, ctx.message!.id, actorId, s.channel.id, emoji);
      if (old !== emoji) {
        if (old !== null) await this.announce(s, ctx, 'message.reaction.removed', old);
        await this.announce(s, ctx, 'message.reaction.added', emoji);
      }
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
    const ctx = await this.writes.open(p, null, 'unreact', { messageId, userExternalId });
    return this.write(ctx, async (s, actorId) => {
      if (await this.reactions.remove(s.m, ctx.message!.id, actorId, emoji))
        await this.announce(s, ctx, 'message.reaction.removed', emoji);
    });
  }

  /** The change under the channel's lock and the message row's, answered with the message as the actor sees it. */
  private write(
    ctx: ChannelWriteContext,
    change: (s: ChannelWriteSession, actorId: string) => Promise<void>,
  ): Promise<MessageView> {
    const actor = ctx.actor!;
    return this.writes.write(ctx, async (s) => {
      await change(s, actor.id);
      const view = await this.views.renderOne(
        s.m,
        { workspaceId: ctx.workspaceId, userId: actor.id },
        ctx.message!.id,
      );
      if (!view) throw AppError.notFound('Message');
      return view;
    });
  }

  private async announce(
    s: ChannelWriteSession,
    ctx: ChannelWriteContext,
    type: 'message.reaction.added' | 'message.reaction.removed',
    emoji: string,
  ): Promise<void> {
    await s.append(type, {
      reaction: {
        message_id: ctx.message!.id,
        channel_id: s.channel.id,
        channel_external_id: s.channel.external_id,
        user_id: ctx.actor!.id,
        emoji,
      },
    });
  }
}
