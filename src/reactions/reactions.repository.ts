import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/** The `reactions` table: one reaction per user per message. */
@Injectable()
export class ReactionsRepository {
  /** Sets the user's reaction; answers the one it replaced (null: none, or the same emoji: nothing changed). */
  async put(
    m: EntityManager,
    messageId: string,
    userId: string,
    channelId: string,
    emoji: string,
  ): Promise<string | null> {
    const found: { old: string | null }[] = await m.query(
      `WITH old AS (SELECT emoji FROM reactions WHERE message_id = $1 AND user_id = $2),
       put AS (
         INSERT INTO reactions (message_id, user_id, channel_id, emoji, created_at)
         SELECT $1, $2, $3, $4, clock_timestamp() WHERE NOT EXISTS (SELECT 1 FROM old WHERE old.emoji = $4)
         ON CONFLICT (message_id, user_id) DO UPDATE SET emoji = EXCLUDED.emoji, created_at = EXCLUDED.created_at
         RETURNING 1)
       SELECT (SELECT emoji FROM old) AS old, (SELECT count(*) FROM put) AS put`,
      [messageId, userId, channelId, emoji],
    );
    return found[0]?.old ?? null;
  }

  /** Removes the user's reaction if it is this emoji; true when one was removed. */
  async remove(m: EntityManager, messageId: string, userId: string, emoji: string): Promise<boolean> {
    const removed: unknown[] = await m.query(
      `WITH d AS (DELETE FROM reactions WHERE message_id = $1 AND user_id = $2 AND emoji = $3 RETURNING 1) SELECT * FROM d`,
      [messageId, userId, emoji],
    );
    return removed.length > 0;
  }
}
