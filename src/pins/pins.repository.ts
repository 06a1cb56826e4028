import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { pageTake } from '../messages/messages.repository';
import { exactTime, rows } from '../infra/database/sql';
import { sourceParam, type MessageSource } from '../messages/message-view.service';
import { hiddenFrom } from '../messages/visibility';

/** CONTRACT §16: at most this many pinned messages per channel. */
export const PIN_LIMIT = 50;

/** What a pin did: pinned it, found it pinned already (a no-op), or refused it (the channel is full). */
export type PinOutcome = 'pinned' | 'already' | 'limit';

/** A keyset position in a channel's pins: the exact pinned_at (microseconds) and the message id. */
export interface PinCursor {
  pinnedKey: string;
  id: string;
}

/**
 * The `message_pins` table (migration 1763690910000). Every write runs inside a ChannelWriteSession:
 * the channel's order lock serialises the pins of a channel, which is what makes the limit's count
 * and the insert after it one atomic step.
 */
@Injectable()
export class PinsRepository {
  /**
   * Pins the message unless it is pinned already or the channel has `limit` pins; one statement.
   * Must run under the channel's order lock: the count sees every pin committed before the lock was
   * taken, and no other pin of the channel can commit until this transaction ends.
   */
  async pin(
    m: EntityManager,
    channelId: string,
    messageId: string,
    pinnedBy: string | null,
    limit = PIN_LIMIT,
  ): Promise<PinOutcome> {
    const found = await rows<{ outcome: PinOutcome }>(
      m,
      `WITH cur AS (SELECT 1 FROM message_pins WHERE message_id = $2::uuid),
            n AS (SELECT count(*)::int AS n FROM message_pins WHERE channel_id = $1::uuid),
            ins AS (
              INSERT INTO message_pins (message_id, channel_id, pinned_by, pinned_at)
              SELECT $2::uuid, $1::uuid, $3::uuid, clock_timestamp()
               WHERE NOT EXISTS (SELECT 1 FROM cur) AND (SELECT n.n FROM n) < $4::int
              ON CONFLICT (message_id) DO NOTHING
              RETURNING 1)
       SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 'pinned'
                   WHEN NOT EXISTS (SELECT 1 FROM cur) AND (SELECT n.n FROM n) >= $4::int THEN 'limit'
                   ELSE 'already' END AS outcome`,
      [channelId, messageId, pinnedBy, limit],
    );
    return found[0]!.outcome;
  }

  /** Unpins the message; false when it was not pinned. Also how an unsend unpins (CONTRACT §16). */
  async unpin(m: EntityManager, messageId: string): Promise<boolean> {
    const found = await rows<{ n: number }>(
      m,
      `WITH d AS (DELETE FROM message_pins WHERE message_id = $1::uuid RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [messageId],
    );
    return (found[0]?.n ?? 0) > 0;
  }

  /** Unpins those of the messages that are pinned (an unsend of several); answers which were. */
  async unpinMany(m: EntityManager, messageIds: string[]): Promise<Set<string>> {
    if (!messageIds.length) return new Set();
    const found = await rows<{ message_id: string }>(
      m,
      `DELETE FROM message_pins WHERE message_id = ANY($1::uuid[]) RETURNING message_id`,
      [messageIds],
    );
    return new Set(found.map((r) => r.message_id));
  }

  /**
   * One page of a channel's pins (limit + 1 rows) as a source for MessageViews.rows: most recently
   * pinned first by (pinned_at, message_id), each row's exact pinned_at as its sort key. Messages of
   * users the viewer ($2 of the rendering statement) blocks are left out, as in history.
   */
  pageSource(channelId: string, before: PinCursor | null, limit: number): MessageSource {
    // $1 (workspace) and $2 (viewer) belong to the rendering statement; ours are sourceParams
    const params: unknown[] = [];
    const where = [
      `pin.channel_id = ${sourceParam(params, channelId, 'uuid')}`,
      `NOT EXISTS (SELECT 1 FROM messages msg WHERE msg.id = pin.message_id AND ${hiddenFrom('msg', '$2::uuid')})`,
    ];
    if (before) {
      where.push(
        `(pin.pinned_at, pin.message_id) < (${sourceParam(params, before.pinnedKey, 'timestamptz')}, ${sourceParam(params, before.id, 'uuid')})`,
      );
    }
    return {
      sql: `SELECT pin.message_id AS id, row_number() OVER (ORDER BY pin.pinned_at DESC, pin.message_id DESC) AS ord,
                   ${exactTime('pin.pinned_at')} AS created_key
              FROM (SELECT pin.message_id, pin.pinned_at FROM message_pins pin
                     WHERE ${where.join(' AND ')}
                     ORDER BY pin.pinned_at DESC, pin.message_id DESC
                     LIMIT ${pageTake(limit)}) pin`,
      params,
    };
  }
}
