import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Thread read state kept per cursor (CONTRACT §23): `thread_reads.unread_replies`, a participant's live
 * replies after their cursor that are not their own, kept by the writes that change it (the reply, an
 * unsend or removal, thread read and unread; src/messages/thread-state.sql.ts), so that history, the
 * inbox and /v1/me/threads read a number instead of probing each thread's replies. The backfill counts
 * them from the replies. `thread_reads_unread` holds the
 * cursors with something unread: the inbox's `unread_threads` is an index-only count of it.
 */
export class ThreadUnreadCounts1763691170000 implements MigrationInterface {
  name = 'ThreadUnreadCounts1763691170000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE thread_reads ADD COLUMN unread_replies integer NOT NULL DEFAULT 0`);
    await q.query(`
      UPDATE thread_reads tr SET unread_replies = (
        SELECT count(*) FROM messages r
         WHERE r.thread_id = tr.root_id AND r.thread_no IS NOT NULL AND r.deleted_at IS NULL
           AND r.user_id IS DISTINCT FROM tr.user_id AND (r.created_at, r.id) >= (tr.read_at, tr.read_id))
       WHERE tr.participant`);
    await q.query(
      `CREATE INDEX thread_reads_unread ON thread_reads (user_id, channel_id) WHERE participant AND unread_replies > 0`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX thread_reads_unread`);
    await q.query(`ALTER TABLE thread_reads DROP COLUMN unread_replies`);
  }
}
