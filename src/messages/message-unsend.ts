import { Injectable } from '@nestjs/common';
import type { ChannelWriteSession, OutgoingEvent } from '../channels/writes';
import { isoNotNull } from '../common/time';
import { rows } from '../infra/database/sql';
import { pinPayload } from '../pins/pin-events';
import { PinsRepository } from '../pins/pins.repository';
import { MessageViews } from './message-view.service';
import { MessagesRepository } from './messages.repository';
import { REPLIES_GONE } from './thread-state.sql';

/** A message as an unsend or a removal finds it under its row lock. */
interface LockedMessage {
  id: string;
  deleted_at: Date | null;
  thread_id: string | null;
  shadowed: boolean;
  /** Its ordinal among the channel's counted messages (null: a thread-only reply or a shadowed message). */
  channel_no: string | null;
  /** A reply's ordinal in its thread (null: not a reply, or shadowed). */
  thread_no: string | null;
  /** A thread root with replies that are not being removed with it. */
  has_other_replies: boolean;
}

export interface UnsendResult {
  /** The ids found in the session's channel (the others are gone, or were never there). */
  found: string[];
  /** Those this call unsent; the rest were unsent already, and fired nothing. */
  unsent: string[];
}

export interface RemoveResult {
  /** The messages removed outright. */
  removed: string[];
  /** Thread roots with other people's replies: unsent (blanked) instead, so their threads stay readable. */
  kept: string[];
}

/**
 * The one unsend (DELETE /v1/messages/:id, a flag review's `unsend_message`, an erasure's
 * `messages=anonymize`) and an erasure's removal (`messages=delete`), for one message or a batch of one
 * channel's messages, always inside that channel's write session: the channel's order lock is held
 * and every event takes the channel's next seq in the same transaction.
 */
@Injectable()
export class MessageUnsend {
  constructor(
    private readonly repo: MessagesRepository,
    private readonly views: MessageViews,
    private readonly pins: PinsRepository,
  ) {}

  /**
   * Blanks the messages (content, attachment, metadata), unpins them, deletes their reminders and
   * updates their threads' counters (and participants' unread replies). Per message in created order: `message.deleted`, then `message.unpinned` when it was
   * pinned (so pin lists kept from events stay right); then one `thread.updated` per thread that lost
   * replies. An already unsent message is left as it is and fires nothing, so unsending again (or an
   * erasure resumed after a crash) never announces a message twice. `forgetAuthor` also clears the
   * messages' `user_id` in the same write (an erasure).
   */
  async unsend(
    s: ChannelWriteSession,
    ids: string[],
    o: { forgetAuthor?: boolean } = {},
  ): Promise<UnsendResult> {
    const locked = await this.lock(s, ids, 'NO KEY UPDATE');
    const live = locked.filter((x) => !x.deleted_at);
    const liveIds = live.map((x) => x.id);
    const unpinned = await this.pins.unpinMany(s.m, liveIds);
    await this.repliesGone(s, live);
    // CONTRACT §25: an unsent message's reminders go, silently (removed messages cascade)
    if (liveIds.length)
      await s.m.query(`DELETE FROM reminders WHERE message_id = ANY ($1::uuid[])`, [liveIds]);
    const stamped = await this.repo.unsend(s.m, liveIds, o.forgetAuthor === true);
    const pinned = await this.views.render(s.m, { workspaceId: s.workspaceId, userId: null }, [...unpinned]);
    const pinnedById = new Map(pinned.map(({ shadowed: _, ...v }) => [v.id, v]));
    const events: OutgoingEvent[] = [];
    for (const x of live) {
      events.push(this.deleted(s, x.id, stamped.get(x.id)!));
      const view = pinnedById.get(x.id);
      if (view)
        events.push({
          type: 'message.unpinned',
          payload: pinPayload(view),
        } satisfies OutgoingEvent<'message.unpinned'>);
    }
    events.push(...(await this.threadsUpdated(s, live)));
    await s.appendMany(events);
    return { found: locked.map((x) => x.id), unsent: liveIds };
  }

  /**
   * Removes the messages outright (an erasure's `messages=delete`). Their reactions, mentions, pins and
   * thread rows go with them (foreign keys), a reply that quoted one loses its quote (`parent_id` set
   * null), their ordinals (in the channel, in a thread) are kept as gaps so unread counts stay right, and their threads' counters
   * are updated. Each fires `message.deleted` with `removed: true` (clients drop it, from pin lists
   * too: a removed message cannot be rendered for `message.unpinned`), except a shadowed one, which
   * nobody but its author ever saw. A thread root with replies that are not removed with it is unsent
   * instead (as `unsend` does), so the others' replies stay readable under a blank root. The channel's
   * `last_message_at` (the inbox's order) stays as it was: `last_message` itself is read live.
   */
  async remove(s: ChannelWriteSession, ids: string[]): Promise<RemoveResult> {
    const locked = await this.lock(s, ids, 'UPDATE');
    const kept = locked.filter((x) => x.has_other_replies).map((x) => x.id);
    if (kept.length) await this.unsend(s, kept);
    const gone = locked.filter((x) => !x.has_other_replies);
    if (!gone.length) return { removed: [], kept };
    await this.repliesGone(s, gone);
    const removedAt = await rows<{ at: Date }>(
      s.m,
      `WITH d AS (DELETE FROM messages WHERE id = ANY($1::uuid[]) AND channel_id = $2 RETURNING 1)
       SELECT clock_timestamp() AS at, (SELECT count(*) FROM d) AS n`,
      [gone.map((x) => x.id), s.channel.id],
    );
    const ordinals = gone.filter((x) => x.channel_no !== null).map((x) => x.channel_no!);
    if (ordinals.length) {
      await s.m.query(
        `INSERT INTO message_gaps (channel_id, channel_no) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`,
        [s.channel.id, ordinals],
      );
    }
    const goneIds = new Set(gone.map((x) => x.id));
    // a root removed with its replies takes its thread's state with it
    const replies = gone.filter((x) => x.thread_no !== null && !goneIds.has(x.thread_id!));
    if (replies.length) {
      await s.m.query(
        `INSERT INTO message_thread_gaps (root_id, thread_no)
         SELECT * FROM unnest($1::uuid[], $2::bigint[]) ON CONFLICT DO NOTHING`,
        [replies.map((x) => x.thread_id), replies.map((x) => x.thread_no)],
      );
    }
    const at = removedAt[0]!.at;
    const events: OutgoingEvent[] = gone
      .filter((x) => !x.shadowed)
      .map((x) => this.deleted(s, x.id, at, true));
    events.push(...(await this.threadsUpdated(s, gone)));
    await s.appendMany(events);
    return { removed: gone.map((x) => x.id), kept };
  }

  /** Participants' kept unread counts (CONTRACT §23) lose the live replies among `messages`, before they go. */
  private async repliesGone(s: ChannelWriteSession, messages: LockedMessage[]): Promise<void> {
    const counted = messages.filter((x) => x.thread_no !== null && !x.deleted_at).map((x) => x.id);
    if (counted.length) await s.m.query(REPLIES_GONE, [counted]);
  }

  /** The session channel's messages among `ids`, locked, in created order. */
  private async lock(
    s: ChannelWriteSession,
    ids: string[],
    strength: 'NO KEY UPDATE' | 'UPDATE',
  ): Promise<LockedMessage[]> {
    if (!ids.length) return [];
    return rows<LockedMessage>(
      s.m,
      `SELECT m.id, m.deleted_at, m.thread_id, m.shadowed, m.channel_no::text AS channel_no, m.thread_no::text AS thread_no,
              (m.thread_id IS NULL
                AND EXISTS (SELECT 1 FROM messages r WHERE r.thread_id = m.id AND r.id <> ALL ($1::uuid[]))) AS has_other_replies
         FROM messages m
        WHERE m.id = ANY($1::uuid[]) AND m.channel_id = $2
        ORDER BY m.created_at, m.id
          FOR ${strength} OF m`,
      [ids, s.channel.id],
    );
  }

  private deleted(
    s: ChannelWriteSession,
    id: string,
    at: Date,
    removed = false,
  ): OutgoingEvent<'message.deleted'> {
    return {
      type: 'message.deleted',
      payload: {
        message: {
          id,
          channel_id: s.channel.id,
          channel_external_id: s.channel.external_id,
          deleted_at: isoNotNull(at),
          ...(removed ? { removed: true as const } : {}),
        },
      },
    };
  }

  /**
   * One `thread.updated` per thread that lost live replies among `messages` (before this call's change).
   * A shadowed reply was never counted, so losing it changes nothing anyone was shown.
   */
  private async threadsUpdated(s: ChannelWriteSession, messages: LockedMessage[]): Promise<OutgoingEvent[]> {
    const lost = new Map<string, number>();
    for (const x of messages) {
      if (x.thread_id && !x.deleted_at && !x.shadowed)
        lost.set(x.thread_id, (lost.get(x.thread_id) ?? 0) + 1);
    }
    const counters = await this.repo.repliesUnsent(s.m, lost);
    return [...counters].map(
      ([id, c]) =>
        ({
          type: 'thread.updated',
          payload: {
            message: { id, channel_id: s.channel.id, channel_external_id: s.channel.external_id, ...c },
          },
        }) satisfies OutgoingEvent<'thread.updated'>,
    );
  }
}
