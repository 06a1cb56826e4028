import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelsRepository } from '../channels/channels.repository';
import { isUuid } from '../common/ids';
import { decodeIdCursor, pageOf } from '../common/pagination';
import { isoNotNull } from '../common/time';
import { AuditQueryDto } from './dto/audit-query.dto';
import { AuditRow, ModerationAuditRepository } from './moderation-audit.repository';

export interface AuditEntryView {
  id: string;
  channel_id: string | null;
  user_id: string | null;
  message_id: string | null;
  rule: string;
  action: string;
  excerpt: string;
  created_at: string;
}

const DEFAULT_LIMIT = 50;

/** GET /v1/moderation/audit (CONTRACT §4). */
@Injectable()
export class ModerationAuditService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: ModerationAuditRepository,
    private readonly channels: ChannelsRepository,
  ) {}

  /**
   * Filters narrow the list and never fail: an unknown user or channel simply has no entries. A channel
   * is looked up by id, then external_id; one deleted since keeps its entries, found by either value.
   */
  async list(workspaceId: string, q: AuditQueryDto) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const beforeId = q.before !== undefined ? decodeIdCursor(q.before) : undefined;
    let channelId: string | undefined;
    let channelRef: string | undefined;
    if (q.channel !== undefined) {
      const channel = await this.channels.findByRef(
        this.db.manager,
        workspaceId,
        q.channel,
        isUuid(q.channel),
      );
      if (channel) channelId = channel.id;
      else channelRef = q.channel;
    }
    const rows = await this.repo.list(workspaceId, {
      userExternalId: q.user,
      channelId,
      channelRef,
      rule: q.rule,
      beforeId,
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (r) => [r.id]);
    return { entries: page.items.map(entryView), has_more: page.has_more, next_cursor: page.next_cursor };
  }
}

function entryView(r: AuditRow): AuditEntryView {
  return {
    id: r.id,
    channel_id: r.channel_id,
    user_id: r.user_id,
    message_id: r.message_id,
    rule: r.rule,
    action: r.action,
    excerpt: r.excerpt,
    created_at: isoNotNull(r.created_at),
  };
}
