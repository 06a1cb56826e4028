import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-user channel state (CONTRACT §18), on the member's row:
 * - `muted_until`: no push for the channel's messages while it is in the future (mentions still push);
 *   `infinity` is "forever", NULL not muted.
 * - `archived`: out of the inbox until set false.
 * - `hidden_others` / `hidden_at`: the member hid the channel when the channel had this many messages
 *   from others (`message_count - sent_count`, read under the channel's order lock) at this instant.
 *   "The next message from anyone else unhides it" is a read-time rule on the counters the send path
 *   already keeps: the channel is hidden while `message_count - sent_count` has not grown past it
 *   (less the messages of users the member blocks), so the send path writes nothing for it. NULL: not hidden.
 */
export class ChannelUserState1763690920000 implements MigrationInterface {
  name = 'ChannelUserState1763690920000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE channel_members
         ADD COLUMN muted_until timestamptz,
         ADD COLUMN archived boolean NOT NULL DEFAULT false,
         ADD COLUMN hidden_others bigint,
         ADD COLUMN hidden_at timestamptz,
         ADD CONSTRAINT channel_members_hidden CHECK ((hidden_others IS NULL) = (hidden_at IS NULL))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE channel_members DROP CONSTRAINT channel_members_hidden,
         DROP COLUMN hidden_at, DROP COLUMN hidden_others, DROP COLUMN archived, DROP COLUMN muted_until`,
    );
  }
}
