import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import { ChannelWriteContext, ChannelWriteSession, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { ListQueryDto } from '../common/http/list-query.dto';
import { DEFAULT_PAGE_SIZE, HistoryPage } from '../messages/message-history.service';
import { MessageViewer, MessageViews } from '../messages/message-view.service';
import type { MessageView } from '../contract/events';
import { pinPayload } from './pin-events';
import { PIN_LIMIT, PinCursor, PinsRepository } from './pins.repository';

/**
 * CONTRACT §16. Pins and unpins are message-targeted channel writes: a backend key, an admin of a
 * group, or either member of a direct channel (`manage`), in the channel's write session, whose order
 * lock serialises the pins of a channel (the 50-pin limit) and gives the events their seq.
 */
@Injectable()
export class PinsService {
  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly access: ChannelAccess,
    private readonly repo: PinsRepository,
    private readonly views: MessageViews,
  ) {}

  /** Pins the message; pinning a pinned message is a no-op (200, no event). */
  async pin(p: WorkspacePrincipal, messageId: string): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'pin', { messageId });
    return this.write(
      p,
      ctx,
      async (s) => {
        const outcome = await this.repo.pin(s.m, s.channel.id, messageId, ctx.actor?.id ?? null);
        if (outcome === 'limit')
          throw new AppError(
            'PIN_LIMIT',
            `A channel can have at most ${PIN_LIMIT} pinned messages; unpin one first`,
          );
        return outcome === 'pinned';
      },
      'message.pinned',
    );
  }

  /** Unpins the message; unpinning a message that is not pinned is a no-op (200, no event). */
  async unpin(p: WorkspacePrincipal, messageId: string): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'unpin', { messageId });
    return this.write(p, ctx, (s) => this.repo.unpin(s.m, messageId), 'message.unpinned');
  }

  /** GET /v1/channels/:id/pins: members (and the backend key), most recently pinned first. */
  async list(p: WorkspacePrincipal, channelRef: string, q: ListQueryDto): Promise<HistoryPage> {
    const before = q.before !== undefined ? cursorOf(q.before) : null;
    const { channel } = await this.access.open(p, channelRef);
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.views.rows(
      this.db.manager,
      viewerOf(p),
      this.repo.pageSource(channel.id, before, limit),
    );
    // created_key is the source's sort key: here the exact pinned_at
    const page = pageOf(rows, limit, (r) => [r.created_key!, r.view.id]);
    return {
      messages: page.items.map((r) => r.view),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /**
   * The change in the channel's write session (its policy applied again under the lock), answered with
   * the message as the caller sees it; when it changed something, its event with the message.
   */
  private write(
    p: WorkspacePrincipal,
    ctx: ChannelWriteContext,
    change: (s: ChannelWriteSession) => Promise<boolean>,
    event: 'message.pinned' | 'message.unpinned',
  ): Promise<MessageView> {
    return this.writes.write(ctx, async (s) => {
      const changed = await change(s);
      const view = await this.render(s.m, viewerOf(p), ctx.message!.id);
      if (changed) await s.append(event, pinPayload(view));
      return view;
    });
  }

  private async render(m: EntityManager, viewer: MessageViewer, id: string): Promise<MessageView> {
    const view = await this.views.renderOne(m, viewer, id);
    if (!view) throw AppError.notFound('Message');
    return view;
  }
}

function viewerOf(p: WorkspacePrincipal): MessageViewer {
  return { workspaceId: p.workspaceId, userId: p.kind === 'user' ? p.userId : null };
}

function cursorOf(value: string): PinCursor {
  const { key: pinnedKey, id } = decodeTimeIdCursor(value);
  return { pinnedKey, id };
}
