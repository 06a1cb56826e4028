import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelWrites } from '../channels/writes';
import type { UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { parseRfc3339 } from '../common/rfc3339';
import type { ReminderView } from '../contract/events';
import { CHANNEL_ORDER_LOCK_SEED } from '../events/channel-order';
import { asMember, exactTime, rows } from '../infra/database/sql';
import { hiddenFrom } from '../messages/visibility';
import type { MyRemindersQueryDto, ReminderStatus } from './dto/reminder.dto';
import { COLUMNS, FROM, HIDDEN, ReminderRow, ReminderViews } from './reminder-views';

/** CONTRACT §25's bounds. */
export const MAX_REMINDERS_PER_USER = 1000;
const MIN_AHEAD_MS = 1000;
/** The advisory lock a user's reminder inserts take, so the per-user cap holds under concurrency. */
const REMINDER_CAP_LOCK_SEED = 2510;

/** Each list's filter, order and keyset column (`before` is the last row's key and id). */
const LISTS: Record<ReminderStatus | 'all', { where: string; key: string; order: 'ASC' | 'DESC' }> = {
  all: { where: 'true', key: 'r.created_at', order: 'DESC' },
  saved: { where: 'r.remind_at IS NULL', key: 'r.created_at', order: 'DESC' },
  upcoming: { where: 'r.remind_at IS NOT NULL AND r.fired_at IS NULL', key: 'r.remind_at', order: 'ASC' },
  due: { where: 'r.fired_at IS NOT NULL', key: 'r.fired_at', order: 'DESC' },
};

/**
 * Reminders (CONTRACT §25): a user's own, about a message of a channel they belong to, saved for later
 * or armed for a time. The scheduler fires an armed one once: `notification.reminder_due` to the user's
 * sockets and sync, the push to their devices (PushRelay), webhook `reminder.due`, all written in the
 * transaction that marks it fired. Unsending the message (MessageUnsend) or leaving the channel
 * (the membership's cascade) deletes its reminders silently.
 */
@Injectable()
export class RemindersService {
  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly reminders: ReminderViews,
  ) {}

  /** POST /v1/messages/:id/reminder. */
  async create(
    p: WorkspacePrincipal,
    messageId: string,
    remindAt: string | null | undefined,
    userExternalId?: string,
  ): Promise<ReminderView> {
    const at = this.when(remindAt ?? null);
    const { userId, channelId } = await this.target(p, messageId, userExternalId, true);
    const id = newId();
    await asMember(() =>
      this.db.transaction(async (m) => {
        // the channel's order lock, shared, then the user's: an unsend of the message (which deletes its
        // reminders holding the channel's lock) has either happened, and is seen below, or waits for this
        // one; the cap is counted with the user's lock held, so two creates never both take the last place
        await m.query(
          `SELECT pg_advisory_xact_lock_shared(hashtextextended($1::uuid::text, ${CHANNEL_ORDER_LOCK_SEED})),
                  pg_advisory_xact_lock(hashtextextended($2::text, ${REMINDER_CAP_LOCK_SEED}))`,
          [channelId, userId],
        );
        const [message] = await rows<{ deleted: boolean }>(
          m,
          `SELECT deleted_at IS NOT NULL AS deleted FROM messages WHERE id = $1`,
          [messageId],
        );
        if (!message) throw AppError.notFound('Message');
        if (message.deleted) throw new AppError('MESSAGE_DELETED');
        const inserted = await rows<{ id: string }>(
          m,
          `INSERT INTO reminders (id, workspace_id, channel_id, user_id, message_id, remind_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp(), clock_timestamp())
           ON CONFLICT ON CONSTRAINT reminders_one_per_message DO NOTHING RETURNING id`,
          [id, p.workspaceId, channelId, userId, messageId, at],
        );
        if (!inserted.length) throw new AppError('REMINDER_EXISTS');
        const [count] = await rows<{ n: number }>(
          m,
          `SELECT count(*)::int AS n FROM reminders WHERE user_id = $1`,
          [userId],
        );
        if (count!.n > MAX_REMINDERS_PER_USER) throw new AppError('REMINDER_LIMIT'); // rolls the insert back
      }),
    );
    return this.one(userId, id);
  }

  /** PATCH /v1/messages/:id/reminder: a time arms it (a fired one too), null makes it saved. */
  async update(
    p: WorkspacePrincipal,
    messageId: string,
    remindAt: string | null,
    userExternalId?: string,
  ): Promise<ReminderView> {
    const at = this.when(remindAt);
    const { userId } = await this.target(p, messageId, userExternalId, false);
    const updated = await rows<{ id: string }>(
      this.db.manager,
      `UPDATE reminders SET remind_at = $3, fired_at = NULL, updated_at = clock_timestamp()
        WHERE user_id = $1 AND message_id = $2 RETURNING id`,
      [userId, messageId, at],
    );
    if (!updated.length) throw AppError.notFound('Reminder');
    return this.one(userId, updated[0]!.id);
  }

  /** DELETE /v1/messages/:id/reminder. */
  async delete(p: WorkspacePrincipal, messageId: string, userExternalId?: string): Promise<void> {
    const { userId } = await this.target(p, messageId, userExternalId, false);
    const gone = await rows<{ id: string }>(
      this.db.manager,
      `DELETE FROM reminders WHERE user_id = $1 AND message_id = $2 RETURNING id`,
      [userId, messageId],
    );
    if (!gone.length) throw AppError.notFound('Reminder');
  }

  /** GET /v1/me/reminders. */
  async list(p: UserPrincipal, q: MyRemindersQueryDto) {
    const limit = q.limit ?? 50;
    const list = LISTS[q.filter ?? 'all'];
    const cursor = q.before ? decodeTimeIdCursor(q.before) : undefined;
    const after = list.order === 'ASC' ? '>' : '<';
    const found = await rows<ReminderRow>(
      this.db.manager,
      `SELECT ${COLUMNS}, ${exactTime(list.key)} AS list_key FROM ${FROM}
        WHERE r.user_id = $1 AND ${list.where} AND NOT ${HIDDEN}
          AND ($2::timestamptz IS NULL OR (${list.key}, r.id) ${after} ($2::timestamptz, $3::uuid))
        ORDER BY ${list.key} ${list.order}, r.id ${list.order} LIMIT $4`,
      [p.userId, cursor?.key ?? null, cursor?.id ?? null, limit + 1],
    );
    const page = pageOf(found, limit, (r) => [r.list_key, r.id]);
    return {
      reminders: await this.reminders.withMessages(this.db.manager, page.items),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /** A remind_at as stored: null (saved), or an RFC 3339 time 1 s to 1 year ahead (else 400). */
  private when(value: string | null): string | null {
    if (value === null) return null;
    const instant = parseRfc3339(value);
    const at = instant ? Date.parse(instant.utc) : NaN;
    const now = new Date();
    const yearAhead = new Date(now).setUTCFullYear(now.getUTCFullYear() + 1);
    if (!instant || !(at - now.getTime() >= MIN_AHEAD_MS && at <= yearAhead))
      throw AppError.validation('remind_at', 'must be an RFC 3339 time 1 second to 1 year ahead');
    return instant.utc;
  }

  /**
   * The acting user and the message's channel: a message of the workspace (404) the user sees (404), in
   * a channel they belong to (403); for a new reminder, not unsent (422).
   */
  private async target(
    p: WorkspacePrincipal,
    messageId: string,
    userExternalId: string | undefined,
    live: boolean,
  ): Promise<{ userId: string; channelId: string }> {
    const ctx = await this.writes.open(p, null, 'mark_read', { messageId, userExternalId });
    const userId = ctx.actor!.id;
    const [visible] = await rows<{ ok: boolean }>(
      this.db.manager,
      `SELECT true AS ok FROM messages msg WHERE msg.id = $1 AND NOT ${hiddenFrom('msg', '$2::uuid')}`,
      [messageId, userId],
    );
    if (!visible) throw AppError.notFound('Message');
    if (live && ctx.message?.deleted_at) throw new AppError('MESSAGE_DELETED');
    return { userId, channelId: ctx.channel.id };
  }

  private async one(userId: string, id: string): Promise<ReminderView> {
    const found = await rows<ReminderRow>(
      this.db.manager,
      `SELECT ${COLUMNS}, '' AS list_key FROM ${FROM} WHERE r.user_id = $1 AND r.id = $2`,
      [userId, id],
    );
    const [view] = await this.reminders.withMessages(this.db.manager, found);
    if (!view) throw AppError.notFound('Reminder'); // deleted meanwhile
    return view;
  }
}
