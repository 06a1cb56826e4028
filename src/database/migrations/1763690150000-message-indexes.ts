import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes the messaging tables' foreign keys and lists need beyond their primary keys:
 * - deleting a channel or a user cascades into reactions and mentions by channel_id / user_id, which
 *   without these indexes is a scan of the whole table per deleted row;
 * - GET /v1/me/blocks pages a user's blocks newest first.
 */
export class MessageIndexes1763690150000 implements MigrationInterface {
  name = 'MessageIndexes1763690150000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX reactions_channel ON reactions (channel_id)`);
    await q.query(`CREATE INDEX reactions_user ON reactions (user_id)`);
    await q.query(`CREATE INDEX message_mentions_channel ON message_mentions (channel_id)`);
    await q.query(
      `CREATE INDEX blocks_blocker_created ON blocks (blocker_id, created_at DESC, blocked_id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const i of [
      'blocks_blocker_created',
      'message_mentions_channel',
      'reactions_user',
      'reactions_channel',
    ]) {
      await q.query(`DROP INDEX ${i}`);
    }
  }
}
