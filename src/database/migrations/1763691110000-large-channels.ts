import { MigrationInterface, QueryRunner } from 'typeorm';
import { loadFunctionFiles } from '../schema-functions';

/**
 * Large channels (CONTRACT §29): `channels.member_count`, kept by a statement-level trigger on
 * `channel_members` (src/database/functions/chat_count_members.sql, created here as the file has it;
 * a later change of the file is applied after the migrations like every function file), so every rule
 * that depends on a channel being large reads one column, not a count of its members; and the
 * channel's admins by a partial index (a large channel's member events go to them alone).
 */
export class LargeChannels1763691110000 implements MigrationInterface {
  name = 'LargeChannels1763691110000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channels ADD COLUMN member_count integer NOT NULL DEFAULT 0`);
    await q.query(
      `UPDATE channels c SET member_count = m.n
         FROM (SELECT channel_id, count(*)::integer AS n FROM channel_members GROUP BY channel_id) m
        WHERE c.id = m.channel_id`,
    );
    await q.query(loadFunctionFiles().find((f) => f.name === 'chat_count_members')!.text);
    await q.query(
      `CREATE TRIGGER channel_members_added AFTER INSERT ON channel_members
         REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chat_count_members()`,
    );
    await q.query(
      `CREATE TRIGGER channel_members_removed AFTER DELETE ON channel_members
         REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chat_count_members()`,
    );
    await q.query(`CREATE INDEX channel_members_admins ON channel_members (channel_id) WHERE role = 'admin'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX channel_members_admins`);
    await q.query(`DROP TRIGGER channel_members_removed ON channel_members`);
    await q.query(`DROP TRIGGER channel_members_added ON channel_members`);
    await q.query(`DROP FUNCTION chat_count_members()`);
    await q.query(`ALTER TABLE channels DROP COLUMN member_count`);
  }
}
