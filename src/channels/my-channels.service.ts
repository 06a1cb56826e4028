import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { UserPrincipal } from '../common/auth/principal';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { exactTime } from '../infra/database/sql';
import { prepared } from '../infra/database/prepared';
import { isoNotNull } from '../common/time';
import { AppError } from '../common/errors/app-error';
import { ChannelAccess } from './channel-access.service';
import { MessageViews } from '../messages/message-view.service';
import { HIDDEN_NOW, MUTED_UNTIL_SHOWN } from './channel-state.sql';
import { CHANNEL_COLUMNS, ChannelRow, ChannelsRepository } from './channels.repository';
import { hiddenFrom } from '../messages/visibility';
import { AFTER_EVERY_ID, unreadThreadsSql } from '../messages/thread-state.sql';

interface MyChannelRow extends ChannelRow {
  my_role: 'admin' | 'member' | null;
  last_read_at: Date;
  activity_key: string;
  unread_count: number;
  mention_unread_count: number;
  unread_threads: number;
  last_message_id: string | null;
  muted_until: string | null;
  hidden: boolean;
  archived: boolean;
}

/** Which channels the inbox lists beside the visible ones (`?include=hidden,archived`, CONTRACT §18). */
export interface InboxInclude {
  hidden: boolean;
  archived: boolean;
}

/**
 * Messages the reader may not see (authors they block, others' shadowed messages) are left out of every
 * count and of `last_message`. Shadowed messages take no counter (chat_send_message), so only the unsent
 * count and `last_message` need the rule for them.
 */
const NOT_BLOCKED = `NOT ${hiddenFrom('msg', '$1::uuid')}`;

/** A message (alias msg) at or before the reader's position: read. */
const READ = `msg.created_at <= page.pos_at AND (msg.created_at, msg.id) < (page.pos_at, page.pos_id)`;
/**
 * The same for a sender's own messages, on the instant alone so the (user, channel, created_at) index
 * answers it without the table: a position before a message excludes that message's instant, and no
 * other message of the channel has that instant (they are stamped one by one under the channel's lock).
 */
const READ_BY_SENDER = `msg.created_at <= page.pos_at AND (page.pos_id = '${AFTER_EVERY_ID}' OR msg.created_at < page.pos_at)`;
/** After it: unread. */
const UNREAD = `msg.created_at >= page.pos_at AND (msg.created_at, msg.id) >= (page.pos_at, page.pos_id)`;

/**
 * The reader's read position (CONTRACT §22): just before the message marked unread (its created_at and
 * id), or else `last_read_at` (every message up to that instant read). Shown as `last_read_at`, a
 * position marked unread as the message's instant less 1 ms.
 */
const MEMBER_CHANNEL_COLUMNS = `${CHANNEL_COLUMNS}, c.message_count, cm.role AS my_role, cm.sent_count,
  COALESCE(cm.unread_at - interval '1 millisecond', cm.last_read_at) AS last_read_at,
  COALESCE(cm.unread_at, cm.last_read_at) AS pos_at, COALESCE(cm.unread_id, '${AFTER_EVERY_ID}'::uuid) AS pos_id,
  ${exactTime('COALESCE(c.last_message_at, c.created_at)')} AS activity_key,
  ${MUTED_UNTIL_SHOWN} AS muted_until, ${HIDDEN_NOW} AS hidden, cm.archived`;

/**
 * The inbox statement over `page`, the reader's ($1) channels to show: the page of the list
 * ($2 = limit + 1, $3/$4 the cursor, $5/$6 whether hidden/archived ones are included), or one channel ($2).
 * The list is filtered and ordered on narrow rows (ids, activity, hidden, archived) over all the reader's
 * channels; the shown columns (times as text, the mute) are computed for the page's rows only.
 */
const PAGE_OF_LIST = `page AS (
  SELECT ${MEMBER_CHANNEL_COLUMNS}
    FROM (SELECT c.id
            FROM channel_members cm JOIN channels c ON c.id = cm.channel_id
           WHERE cm.user_id = $1
             AND ($3::timestamptz IS NULL OR (COALESCE(c.last_message_at, c.created_at), c.id) < ($3::timestamptz, $4::uuid))
             AND ($5::boolean OR NOT ${HIDDEN_NOW}) AND ($6::boolean OR NOT cm.archived)
           ORDER BY COALESCE(c.last_message_at, c.created_at) DESC, c.id DESC
           LIMIT $2) mine
    JOIN channel_members cm ON cm.channel_id = mine.id AND cm.user_id = $1
    JOIN channels c ON c.id = mine.id)`;

const PAGE_OF_ONE = `page AS (
  SELECT ${MEMBER_CHANNEL_COLUMNS}
    FROM channel_members cm JOIN channels c ON c.id = cm.channel_id
   WHERE cm.user_id = $1 AND cm.channel_id = $2)`;

function inboxStatement(page: string): string {
  return `WITH ${page}
       SELECT page.*,
         (page.message_count - rd.read_no
            - (SELECT count(*) FROM message_gaps g WHERE g.channel_id = page.id AND g.channel_no > rd.read_no)
            - (page.sent_count
               - COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = $1 AND msg.channel_id = page.id
                             AND msg.sender_no IS NOT NULL AND ${READ_BY_SENDER} ORDER BY msg.created_at DESC LIMIT 1), 0))
            - (SELECT count(*) FROM messages msg WHERE msg.channel_id = page.id AND msg.deleted_at IS NOT NULL
                  AND msg.show_in_channel IS NOT FALSE
                  AND ${UNREAD} AND msg.user_id IS DISTINCT FROM $1 AND ${NOT_BLOCKED})
            - COALESCE((SELECT sum(
                  COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = b.blocked_id AND msg.channel_id = page.id
                             AND msg.sender_no IS NOT NULL ORDER BY msg.created_at DESC LIMIT 1), 0)
                  - COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = b.blocked_id AND msg.channel_id = page.id
                               AND msg.sender_no IS NOT NULL AND ${READ_BY_SENDER} ORDER BY msg.created_at DESC LIMIT 1), 0))
                FROM blocks b WHERE b.blocker_id = $1), 0)
         )::int AS unread_count,
         (SELECT count(*) FROM message_mentions mm JOIN messages msg ON msg.id = mm.message_id
           WHERE mm.user_id = $1 AND mm.channel_id = page.id AND mm.created_at >= page.pos_at AND (mm.created_at, mm.message_id) >= (page.pos_at, page.pos_id)
             AND msg.deleted_at IS NULL AND msg.user_id IS DISTINCT FROM $1 AND ${NOT_BLOCKED})::int AS mention_unread_count,
         (SELECT msg.id FROM messages msg WHERE msg.channel_id = page.id AND msg.show_in_channel IS NOT FALSE AND ${NOT_BLOCKED}
           ORDER BY msg.created_at DESC, msg.id DESC LIMIT 1) AS last_message_id,
         ${unreadThreadsSql('$1::uuid', 'page.id')} AS unread_threads
         FROM page
         CROSS JOIN LATERAL (
           SELECT COALESCE((SELECT msg.channel_no FROM messages msg WHERE msg.channel_id = page.id AND msg.show_in_channel IS NOT FALSE
                             AND msg.channel_no IS NOT NULL AND ${READ}
                             ORDER BY msg.created_at DESC, msg.id DESC LIMIT 1), 0) AS read_no) rd
        ORDER BY COALESCE(page.last_message_at, page.created_at) DESC, page.id DESC`;
}

const LIST_STATEMENT = inboxStatement(PAGE_OF_LIST);
const ONE_STATEMENT = inboxStatement(PAGE_OF_ONE);

/**
 * GET /v1/me/channels in one statement for the page of channels with their counts, then the last
 * messages and the channel objects. Unread counts cost a few index probes per channel, whatever is
 * unread (the counters of chat_send_message): the messages after the read cursor are the channel's
 * `message_count` minus the `channel_no` at the cursor, less the reader's own (from `sent_count` and
 * `sender_no` the same way), less the ordinals of messages removed outright past it (`message_gaps`, an
 * erasure's `messages=delete`: an empty index range almost always), less unsent ones (a partial index
 * holds only those) and, for a reader who blocks someone, that user's (the same probes per blocked
 * user). Mentions are counted from the
 * reader's own mention rows after the cursor. `unread_threads` (CONTRACT §23) counts the reader's
 * threads in the channel with unread replies from the counts their cursors keep
 * (src/messages/thread-state.sql.ts): an index-only count for a reader who blocks nobody. Hidden and archived channels (CONTRACT §18) are left out
 * unless asked for; every channel carries the reader's `muted_until`, `hidden` and `archived`.
 */
@Injectable()
export class MyChannelsService {
  constructor(
    private readonly db: DataSource,
    private readonly channels: ChannelsRepository,
    private readonly messages: MessageViews,
    private readonly access: ChannelAccess,
  ) {}

  /** GET /v1/me/channels/:id: the caller's view of one channel, as a list entry (by id or external id). */
  async get(p: UserPrincipal, ref: string) {
    const { channel } = await this.access.open(p, ref);
    const view = await this.one(p, channel.id);
    if (!view) throw new AppError('NOT_A_MEMBER'); // left meanwhile
    return view;
  }

  async list(
    p: UserPrincipal,
    limit: number,
    before?: string,
    include: InboxInclude = { hidden: false, archived: false },
  ) {
    const cursor = before ? decodeTimeIdCursor(before) : undefined;
    const rows = await prepared<MyChannelRow>(this.db.manager, LIST_STATEMENT, [
      p.userId,
      limit + 1,
      cursor?.key ?? null,
      cursor?.id ?? null,
      include.hidden,
      include.archived,
    ]);
    const page = pageOf(rows, limit, (r) => [r.activity_key, r.id]);
    return {
      channels: await this.views(p, page.items),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /** One channel as the inbox shows it to the reader (hidden or archived too); null when not a member. */
  async one(p: UserPrincipal, channelId: string) {
    const rows = await prepared<MyChannelRow>(this.db.manager, ONE_STATEMENT, [p.userId, channelId]);
    return (await this.views(p, rows))[0] ?? null;
  }

  /** A member's read position and unread counts in a channel, as the inbox shows them (in `m`'s transaction); null when not a member. */
  async readState(
    m: EntityManager,
    userId: string,
    channelId: string,
  ): Promise<{ last_read_at: string; unread_count: number; mention_unread_count: number } | null> {
    const [row] = await prepared<MyChannelRow>(m, ONE_STATEMENT, [userId, channelId]);
    return row ? readStateOf(row) : null;
  }

  private async views(p: UserPrincipal, rows: MyChannelRow[]) {
    const lastIds = rows.map((c) => c.last_message_id).filter((x): x is string => !!x);
    const lastMessages = lastIds.length
      ? await this.messages.render(this.db.manager, { workspaceId: p.workspaceId, userId: p.userId }, lastIds)
      : [];
    const lastById = new Map(lastMessages.map((msg) => [msg.id, msg]));
    const views = await this.channels.views(this.db.manager, rows);
    return views.map((v, i) => {
      const row = rows[i]!;
      return {
        ...v,
        role: row.type === 'direct' ? null : row.my_role,
        ...readStateOf(row),
        unread_threads: row.unread_threads,
        last_message: row.last_message_id ? (lastById.get(row.last_message_id) ?? null) : null,
        muted_until: row.muted_until,
        hidden: row.hidden,
        archived: row.archived,
      };
    });
  }
}

/** The reader's position and counts of an inbox row, as every view of it shows them. */
function readStateOf(row: MyChannelRow): {
  last_read_at: string;
  unread_count: number;
  mention_unread_count: number;
} {
  return {
    last_read_at: isoNotNull(row.last_read_at),
    unread_count: row.unread_count,
    mention_unread_count: row.mention_unread_count,
  };
}
