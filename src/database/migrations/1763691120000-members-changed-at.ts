import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `channels.members_changed_at`: when the channel's members last changed (set by the chat_count_members
 * trigger on every insert into or delete from channel_members; a new channel's row starts with its
 * creation). A send within LivePublish's ROOM_MOVE_GRACE_MS of it is left to the log's publisher, which
 * moves the members' sockets between rooms in log order before it publishes the send.
 */
export class MembersChangedAt1763691120000 implements MigrationInterface {
  name = 'MembersChangedAt1763691120000';

  async up(q: QueryRunner): Promise<void> {
    // now() is stable: a fast default, no table rewrite
    await q.query(`ALTER TABLE channels ADD COLUMN members_changed_at timestamptz NOT NULL DEFAULT now()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channels DROP COLUMN members_changed_at`);
  }
}
