import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mark unread (CONTRACT §22): a member's own read position may sit just before a message
 * (`unread_at`, `unread_id`: that message's created_at and id) instead of at `last_read_at`. The
 * position counts for the member's own unread counts only; `last_read_at` stays the highest read
 * position ever reported, which receipts and `channel.read` use (they never move backwards). A mark
 * read clears the position.
 */
export class MarkUnread1763691130000 implements MigrationInterface {
  name = 'MarkUnread1763691130000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channel_members ADD COLUMN unread_at timestamptz, ADD COLUMN unread_id uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channel_members DROP COLUMN unread_id, DROP COLUMN unread_at`);
  }
}
