import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { ChannelStatePayload } from '../contract/events';
import { rows } from '../infra/database/sql';
import { HIDDEN_NOW, MUTED_UNTIL_SHOWN } from './channel-state.sql';

/** A change to a member's own state of a channel: only the fields present change. */
export interface ChannelStatePatch {
  /** `infinity` (forever), a UTC time, or null (not muted) */
  mutedUntil?: string | null;
  hidden?: boolean;
  archived?: boolean;
}

/** A member's own channel state (CONTRACT §18), on their `channel_members` row. */
@Injectable()
export class ChannelStateRepository {
  /**
   * Applies the patch; answers the state as the API shows it, or null when the user is not a member.
   * Run it under the channel's order lock: hiding records the channel's count of messages from others
   * (`message_count - sent_count`), which the send path advances under that lock, so the count and the
   * instant agree with the messages before and after.
   */
  async set(
    m: EntityManager,
    channelId: string,
    userId: string,
    patch: ChannelStatePatch,
  ): Promise<ChannelStatePayload | null> {
    const found = await rows<ChannelStatePayload>(
      m,
      `UPDATE channel_members cm SET
              muted_until = CASE WHEN $3 THEN $4::timestamptz ELSE cm.muted_until END,
              archived = COALESCE($5::boolean, cm.archived),
              hidden_others = CASE WHEN $6::boolean IS NULL THEN cm.hidden_others WHEN $6 THEN c.message_count - cm.sent_count END,
              hidden_at = CASE WHEN $6::boolean IS NULL THEN cm.hidden_at WHEN $6 THEN clock_timestamp() END
         FROM channels c
        WHERE c.id = cm.channel_id AND cm.channel_id = $1 AND cm.user_id = $2
       RETURNING cm.channel_id, ${MUTED_UNTIL_SHOWN} AS muted_until, ${HIDDEN_NOW} AS hidden, cm.archived`,
      [
        channelId,
        userId,
        patch.mutedUntil !== undefined,
        patch.mutedUntil ?? null,
        patch.archived ?? null,
        patch.hidden ?? null,
      ],
    );
    return found[0] ?? null;
  }
}
