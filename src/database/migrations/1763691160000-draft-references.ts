import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A draft's thread and quoted message are messages (CONTRACT §24): removing the root outright (an
 * erasure's `messages=delete`) deletes the drafts of its thread, removing the quoted message drops the
 * quote, as for a sent reply. Partial indexes serve those lookups when messages are deleted.
 */
export class DraftReferences1763691160000 implements MigrationInterface {
  name = 'DraftReferences1763691160000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM drafts d WHERE d.thread_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.thread_id)`,
    );
    await q.query(
      `UPDATE drafts d SET parent_id = NULL WHERE d.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.parent_id)`,
    );
    await q.query(`
      ALTER TABLE drafts
        ADD CONSTRAINT drafts_thread_id_fkey FOREIGN KEY (thread_id) REFERENCES messages(id) ON DELETE CASCADE,
        ADD CONSTRAINT drafts_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES messages(id) ON DELETE SET NULL`);
    await q.query(`CREATE INDEX drafts_thread ON drafts (thread_id) WHERE thread_id IS NOT NULL`);
    await q.query(`CREATE INDEX drafts_parent ON drafts (parent_id) WHERE parent_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX drafts_parent`);
    await q.query(`DROP INDEX drafts_thread`);
    await q.query(
      `ALTER TABLE drafts DROP CONSTRAINT drafts_parent_id_fkey, DROP CONSTRAINT drafts_thread_id_fkey`,
    );
  }
}
