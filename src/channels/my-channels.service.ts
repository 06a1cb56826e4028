import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { UserPrincipal } from '../common/auth/principal';
import { decodeCursor, pageOf } from '../common/pagination';
import { exactTime } from '../infra/database/sql';
import { iso } from '../common/time';
import { MessageViews } from '../messages/message-view.service';
import { ChannelRow, ChannelsRepository } from './channels.repository';

interface MyChannelRow extends ChannelRow {
  my_role: 'admin' | 'member' | null;
  last_read_at: Date;
  activity_key: string;
}

interface Counters {
  channel_id: string;
  unread_count: number;
  mention_unread_count: number;
  last_message_id: string | null;
}

/**
 * GET /v1/me/channels. Counting is per page (at most 100 channels) and each count is a range scan of
 * messages_channel_time from the reader's last_read_at on, so it costs what is unread, never the
 * whole history. Blocked users' and the reader's own messages and unsent ones are not counted.
 */
@Injectable()
export class MyChannelsService {
  constructor(
    private readonly db: DataSource,
    private readonly channels: ChannelsRepository,
    private readonly messages: MessageViews,
  ) {}

  async list(p: UserPrincipal, limit: number, before?: string) {
    const cursor = before ? decodeCursor(before, ['string', 'string']) : undefined;
    const params: unknown[] = [p.userId, limit + 1];
    let after = '';
    if (cursor) {
      params.push(cursor[0], cursor[1]);
      after = `AND (COALESCE(c.last_message_at, c.created_at), c.id) < ($3::timestamptz, $4::uuid)`;
    }
    const rows: MyChannelRow[] = await this.db.query(
      `SELECT c.id, c.workspace_id, c.type, c.external_id, c.name, c.avatar_url, c.created_by, c.last_message_at,
              c.created_at, c.updated_at, cm.role AS my_role, cm.last_read_at,
              ${exactTime('COALESCE(c.last_message_at, c.created_at)')} AS activity_key
         FROM channel_members cm JOIN channels c ON c.id = cm.channel_id
        WHERE cm.user_id = $1 ${after}
        ORDER BY COALESCE(c.last_message_at, c.created_at) DESC, c.id DESC
        LIMIT $2`,
      params,
    );
    const page = pageOf(rows, limit, (r) => [r.activity_key, r.id]);
    const ids = page.items.map((r) => r.id);
    const counters: Counters[] = ids.length
      ? await this.db.query(
          `SELECT cm.channel_id,
             (SELECT count(*) FROM messages msg
               WHERE msg.channel_id = cm.channel_id AND msg.created_at > cm.last_read_at AND msg.deleted_at IS NULL
                 AND msg.user_id IS DISTINCT FROM $1
                 AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = msg.user_id))::int AS unread_count,
             (SELECT count(*) FROM message_mentions mm JOIN messages msg ON msg.id = mm.message_id
               WHERE mm.user_id = $1 AND mm.channel_id = cm.channel_id AND mm.created_at > cm.last_read_at
                 AND msg.deleted_at IS NULL AND msg.user_id IS DISTINCT FROM $1
                 AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = msg.user_id))::int AS mention_unread_count,
             (SELECT msg.id FROM messages msg
               WHERE msg.channel_id = cm.channel_id
                 AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = msg.user_id)
               ORDER BY msg.created_at DESC, msg.id DESC LIMIT 1) AS last_message_id
           FROM channel_members cm
          WHERE cm.user_id = $1 AND cm.channel_id = ANY($2::uuid[])`,
          [p.userId, ids],
        )
      : [];
    const byChannel = new Map(counters.map((c) => [c.channel_id, c]));
    const lastIds = counters.map((c) => c.last_message_id).filter((x): x is string => !!x);
    const lastMessages = lastIds.length
      ? await this.messages.render(this.db.manager, { workspaceId: p.workspaceId, userId: p.userId }, lastIds)
      : [];
    const lastById = new Map(lastMessages.map((msg) => [msg.id, msg]));
    const views = await this.channels.views(this.db.manager, page.items);
    return {
      channels: views.map((v, i) => {
        const row = page.items[i]!;
        const c = byChannel.get(v.id);
        return {
          ...v,
          role: row.type === 'direct' ? null : row.my_role,
          unread_count: c?.unread_count ?? 0,
          mention_unread_count: c?.mention_unread_count ?? 0,
          last_read_at: iso(row.last_read_at),
          last_message: c?.last_message_id ? (lastById.get(c.last_message_id) ?? null) : null,
        };
      }),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }
}
