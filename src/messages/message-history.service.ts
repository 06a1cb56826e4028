import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { parseRfc3339 } from '../common/rfc3339';
import { AppError } from '../common/errors/app-error';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { HistoryQueryDto } from './dto/history-query.dto';
import { MessageSource, MessageViews } from './message-view.service';
import type { MessageView } from '../contract/events';
import { HistoryBound, MessagesRepository } from './messages.repository';

export interface HistoryPage {
  messages: MessageView[];
  has_more: boolean;
  next_cursor: string | null;
}

const RFC3339_SHAPE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
export const DEFAULT_PAGE_SIZE = 50;

/**
 * GET /v1/channels/:id/messages. Keyset pages over (created_at, id) to the microsecond, so concurrent
 * inserts never shift a page: no duplicates, no gaps. Unsent messages stay (blanked); a user's view
 * leaves out the users it blocks.
 */
@Injectable()
export class MessageHistoryService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly repo: MessagesRepository,
    private readonly views: MessageViews,
  ) {}

  async page(p: WorkspacePrincipal, channelRef: string, q: HistoryQueryDto): Promise<HistoryPage> {
    const bound = this.boundOf(q);
    const { channel } = await this.access.open(p, channelRef);
    return this.read(p, q, (limit) => this.repo.pageSource(channel.id, bound, limit));
  }

  /**
   * GET /v1/messages/:id/replies (CONTRACT §15): the thread's replies oldest first, with the same
   * membership rule, blocks and blanking as history. `after` pages on (next_cursor), `before` answers the
   * replies just before a reply, still oldest first, and its next_cursor pages further back.
   */
  async replies(p: WorkspacePrincipal, rootId: string, q: HistoryQueryDto): Promise<HistoryPage> {
    const bound = this.boundOf(q);
    const root = await this.access.openMessage(p, rootId);
    const page = await this.read(p, q, (limit) => this.repo.replySource(root.id, bound, limit));
    if (bound.kind === 'before') page.messages.reverse();
    return page;
  }

  /** One page of a keyset source, rendered for the caller, with the next cursor. */
  private async read(
    p: WorkspacePrincipal,
    q: HistoryQueryDto,
    source: (limit: number) => MessageSource,
  ): Promise<HistoryPage> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.views.rows(
      this.db.manager,
      { workspaceId: p.workspaceId, userId: p.kind === 'user' ? p.userId : null },
      source(limit),
    );
    const page = pageOf(rows, limit, (r) => [r.created_key!, r.view.id]);
    return {
      messages: page.items.map((r) => r.view),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  private boundOf(q: HistoryQueryDto): HistoryBound {
    if (q.before !== undefined && q.after !== undefined)
      throw AppError.validation('after', 'cannot be combined with before');
    if (q.before !== undefined) return { kind: 'before', ...this.cursor(q.before, 'before') };
    if (q.after !== undefined) {
      if (RFC3339_SHAPE.test(q.after)) {
        const instant = parseRfc3339(q.after);
        if (!instant) throw AppError.validation('after', 'is not a valid time');
        return { kind: 'after-time', time: instant };
      }
      return { kind: 'after', ...this.cursor(q.after, 'after') };
    }
    return { kind: 'newest' };
  }

  private cursor(value: string, field: string): { createdKey: string; id: string } {
    const { key: createdKey, id } = decodeTimeIdCursor(value, field);
    return { createdKey, id };
  }
}
