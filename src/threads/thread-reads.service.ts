import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import { ChannelWrites } from '../channels/writes';
import type { UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import type { ThreadMarkedUnread, ThreadReadPayload } from '../contract/events';
import { CHANNEL_ORDER_LOCK_SEED } from '../events/channel-order';
import { EventLogService } from '../events/event-log.service';
import { EventNotifier } from '../events/event-notifier';
import { asMember, exactTime, isoTime, rows } from '../infra/database/sql';
import { MessageViews } from '../messages/message-view.service';
import {
  AFTER_EVERY_ID,
  exactUnreadRepliesSql,
  threadReadAt,
  unreadRepliesSql,
} from '../messages/thread-state.sql';
import { hiddenFrom } from '../messages/visibility';
import type { MyThreadsQueryDto } from './dto/thread.dto';

interface StateRow {
  last_read_at: string | null;
  unread_replies: number;
}

interface MyThreadRow {
  thread_id: string;
  channel_id: string;
  channel_external_id: string;
  reply_count: number;
  last_reply_at: string;
  reply_key: string;
  last_read_at: string | null;
  unread_replies: number;
}

/** The user's cursor in a thread and its unread replies, read in `m`'s transaction ($1 root, $2 user). */
const STATE = `SELECT ${isoTime(threadReadAt('tr'))} AS last_read_at, ${unreadRepliesSql('tr', 'tr.user_id')} AS unread_replies
  FROM thread_reads tr WHERE tr.root_id = $1 AND tr.user_id = $2`;

/** The channel's order lock, shared: no reply or unsend of channel $1 runs until the transaction ends. */
const ORDER_LOCK = (channel: string) =>
  `SELECT pg_advisory_xact_lock_shared(hashtextextended(${channel}::uuid::text, ${CHANNEL_ORDER_LOCK_SEED}))`;

/**
 * Thread read's one statement ($1 root, $2 user, $3 channel, $4 workspace): under the channel's order lock
 * (shared, for this statement only: a reply in flight commits first and is before the cursor, so the kept
 * count is 0), the root gets its (empty) counters row when nobody replied yet, so that views find the
 * cursor by it; the cursor moves to now, and `notification.thread_read` is written with it. A first
 * cursor takes part only as a root nobody replied to yet makes its author and the users it mentions
 * participants (src/messages/message-view.service.ts threadStateOf); reading makes nobody one.
 */
const READ = `WITH l AS (${ORDER_LOCK('$3')}),
  th AS (INSERT INTO message_threads (root_id, channel_id) SELECT $1, $3 FROM l ON CONFLICT (root_id) DO NOTHING),
  up AS (
    INSERT INTO thread_reads AS tr (root_id, user_id, channel_id, participant, read_at, read_id, unread_replies)
    SELECT $1, $2, $3,
           root.user_id = $2 OR EXISTS (SELECT 1 FROM message_mentions mm WHERE mm.message_id = $1 AND mm.user_id = $2),
           clock_timestamp(), '${AFTER_EVERY_ID}', 0
      FROM messages root, l WHERE root.id = $1
    ON CONFLICT (root_id, user_id) DO UPDATE SET read_at = EXCLUDED.read_at, read_id = EXCLUDED.read_id, unread_replies = 0
    RETURNING tr.read_at),
  v AS (SELECT jsonb_build_object('channel_id', $3::uuid, 'thread_id', $1::uuid,
                                  'last_read_at', ${isoTime('up.read_at')}, 'unread_replies', 0) AS payload FROM up),
  ev AS (
    INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience)
    SELECT chat_new_event_id(), $4::uuid, NULL, NULL, 'notification.thread_read', v.payload, ARRAY[$2::uuid] FROM v)
  SELECT payload FROM v`;

/**
 * Thread read state (CONTRACT §23): a user's cursor per thread, thread read and unread, and the
 * caller's threads. Participants and their cursors are written by the send (chat_send_message); these
 * routes move a cursor. The channel's own read position is never touched here, nor the thread's by the
 * channel's routes. Both routes write a user-scoped event to the user's own sockets and sync, in their
 * transaction.
 */
@Injectable()
export class ThreadReadsService {
  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly access: ChannelAccess,
    private readonly views: MessageViews,
    private readonly events: EventLogService,
    private readonly notifier: EventNotifier,
  ) {}

  /** POST /v1/messages/:id/thread/read: the cursor to now; a non-participant gets a cursor but takes no part. */
  async read(p: WorkspacePrincipal, rootId: string, userExternalId?: string): Promise<ThreadReadPayload> {
    const { userId, channelId, workspaceId } = await this.root(p, rootId, userExternalId);
    const [row] = await asMember(() =>
      rows<{ payload: ThreadReadPayload }>(this.db.manager, READ, [rootId, userId, channelId, workspaceId]),
    );
    if (!row) throw AppError.notFound('Message'); // removed meanwhile
    this.notifier.committed();
    return row.payload;
  }

  /**
   * POST /v1/messages/:id/thread/unread: the cursor to just before a live reply of this thread (or the
   * newest one not the user's), which makes the user a participant. No such reply: nothing changes.
   */
  async unread(
    p: WorkspacePrincipal,
    rootId: string,
    messageId: string | undefined,
    userExternalId?: string,
  ): Promise<Omit<ThreadMarkedUnread, 'message_id'>> {
    const { userId, channelId, workspaceId } = await this.root(p, rootId, userExternalId);
    if (messageId !== undefined && !isUuid(messageId)) throw AppError.notFound('Message');
    return asMember(() =>
      this.db.transaction(async (m) => {
        // the channel's order lock, shared, until this transaction ends: the count written below stays
        // right while no reply or unsend can commit in between
        await m.query(ORDER_LOCK('$1'), [channelId]);
        const [reply] = await rows<{ id: string; thread_id: string | null; deleted: boolean }>(
          m,
          messageId !== undefined
            ? `SELECT msg.id, msg.thread_id, msg.deleted_at IS NOT NULL AS deleted FROM messages msg
              WHERE msg.id = $1 AND msg.channel_id = $2 AND NOT ${hiddenFrom('msg', '$3::uuid')} FOR SHARE`
            : `SELECT msg.id, msg.thread_id, false AS deleted FROM messages msg
              WHERE msg.thread_id = $1 AND msg.channel_id = $2 AND msg.deleted_at IS NULL
                AND msg.user_id IS DISTINCT FROM $3 AND NOT ${hiddenFrom('msg', '$3::uuid')}
              ORDER BY msg.created_at DESC, msg.id DESC LIMIT 1 FOR SHARE`,
          [messageId ?? rootId, channelId, userId],
        );
        if (messageId !== undefined) {
          if (!reply) throw AppError.notFound('Message');
          if (reply.thread_id !== rootId)
            throw AppError.validation('message_id', 'is not a reply of this thread');
          if (reply.deleted) throw new AppError('MESSAGE_DELETED');
        }
        if (reply) {
          await m.query(
            `INSERT INTO thread_reads AS tr (root_id, user_id, channel_id, participant, read_at, read_id, unread_replies)
           SELECT $1, $2, $3, true, msg.created_at, msg.id, ${exactUnreadRepliesSql('t', 'msg.created_at', 'msg.id', '$2::uuid')}
             FROM messages msg JOIN message_threads t ON t.root_id = $1 WHERE msg.id = $4
           ON CONFLICT (root_id, user_id) DO UPDATE
             SET participant = true, read_at = EXCLUDED.read_at, read_id = EXCLUDED.read_id,
                 unread_replies = EXCLUDED.unread_replies`,
            [rootId, userId, channelId, reply.id],
          );
        }
        const state = await this.state(m, rootId, userId);
        const payload: ThreadMarkedUnread = {
          channel_id: channelId,
          thread_id: rootId,
          message_id: reply?.id ?? null,
          ...state,
        };
        if (reply)
          await this.events.append(m, {
            workspaceId,
            type: 'notification.mark_unread',
            payload,
            audience: [userId],
          });
        return { thread_id: rootId, channel_id: channelId, ...state };
      }),
    );
  }

  /**
   * GET /v1/me/threads: the threads with live replies the caller takes part in (in channels they are in:
   * leaving drops the cursors), by latest reply, with the root as history shows it.
   */
  async mine(p: UserPrincipal, q: MyThreadsQueryDto) {
    const limit = q.limit ?? 50;
    const cursor = q.before ? decodeTimeIdCursor(q.before) : undefined;
    const channelId = q.channel ? (await this.access.open(p, q.channel)).channel.id : null;
    const found = await rows<MyThreadRow>(
      this.db.manager,
      `SELECT t.root_id AS thread_id, t.channel_id, c.external_id AS channel_external_id, t.reply_count,
              ${isoTime('t.last_reply_at')} AS last_reply_at, ${exactTime('t.last_reply_at')} AS reply_key,
              ${isoTime(threadReadAt('tr'))} AS last_read_at, s.unread_replies
         FROM thread_reads tr
         JOIN message_threads t ON t.root_id = tr.root_id
         JOIN messages root ON root.id = tr.root_id
         JOIN channels c ON c.id = tr.channel_id
         CROSS JOIN LATERAL (SELECT ${unreadRepliesSql('tr', '$1::uuid')} AS unread_replies) s
        WHERE tr.user_id = $1 AND tr.participant AND t.reply_count > 0 AND NOT ${hiddenFrom('root', '$1::uuid')}
          AND ($2::uuid IS NULL OR tr.channel_id = $2::uuid)
          AND ($3::timestamptz IS NULL OR (t.last_reply_at, t.root_id) < ($3::timestamptz, $4::uuid))
          AND (NOT $5::boolean OR s.unread_replies > 0)
        ORDER BY t.last_reply_at DESC, t.root_id DESC
        LIMIT $6`,
      [p.userId, channelId, cursor?.key ?? null, cursor?.id ?? null, q.unread_only === true, limit + 1],
    );
    const page = pageOf(found, limit, (r) => [r.reply_key, r.thread_id]);
    const roots = new Map(
      (
        await this.views.render(
          this.db.manager,
          { workspaceId: p.workspaceId, userId: p.userId },
          page.items.map((r) => r.thread_id),
        )
      ).map((v) => [v.id, v]),
    );
    return {
      threads: page.items.flatMap((r) => {
        const root = roots.get(r.thread_id);
        if (!root) return []; // removed meanwhile
        return [
          {
            thread_id: r.thread_id,
            channel_id: r.channel_id,
            channel_external_id: r.channel_external_id,
            root,
            reply_count: r.reply_count,
            unread_replies: r.unread_replies,
            last_reply_at: r.last_reply_at,
            last_read_at: r.last_read_at,
          },
        ];
      }),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /**
   * The thread's root for the acting user: a message of the workspace (404), in a channel they belong to
   * (403), not itself a reply (400), seen as history shows it (a blocked author's root: 404).
   */
  private async root(
    p: WorkspacePrincipal,
    rootId: string,
    userExternalId?: string,
  ): Promise<{ userId: string; channelId: string; workspaceId: string }> {
    const ctx = await this.writes.open(p, null, 'mark_read', { messageId: rootId, userExternalId });
    const userId = ctx.actor!.id;
    const [root] = await rows<{ thread_id: string | null }>(
      this.db.manager,
      `SELECT msg.thread_id FROM messages msg WHERE msg.id = $1 AND NOT ${hiddenFrom('msg', '$2::uuid')}`,
      [rootId, userId],
    );
    if (!root) throw AppError.notFound('Message');
    if (root.thread_id !== null)
      throw AppError.validation('id', 'is a thread reply; name the thread by its root');
    return { userId, channelId: ctx.channel.id, workspaceId: p.workspaceId };
  }

  private async state(m: EntityManager, rootId: string, userId: string): Promise<StateRow> {
    const [row] = await rows<StateRow>(m, STATE, [rootId, userId]);
    return row ?? { last_read_at: null, unread_replies: 0 };
  }
}
