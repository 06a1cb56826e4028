import { MigrationInterface, QueryRunner } from 'typeorm';

const AFTER_EVERY_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * Thread read state (CONTRACT §23): per-user thread cursors, counted without scanning a thread's replies.
 * - `messages.thread_no`: a stored reply's ordinal in its thread (1, 2, …; none for a shadowed reply,
 *   which counts nowhere), given under the channel's lock by chat_send_message, so ordinal order is
 *   (created_at, id) order. `message_threads.reply_no` is the last ordinal given.
 * - `thread_reads`: a user's cursor in a thread, a position like the channel's read position
 *   (`read_at`, `read_id`: replies before it are read; `read_id` all f's reads every reply of that
 *   instant), and whether the user takes part. The send writes the rows of the participants it makes
 *   (the replier, the root's author and mentioned users at the first reply, the users a reply
 *   mentions); thread read writes a cursor without making a participant. The membership owns the rows:
 *   leaving the channel (and its deletion, and an erasure) drops them.
 * - A participant's unread replies are the thread's ordinals after the one at the cursor (an index
 *   probe on `messages_thread`), less those removed outright (`message_thread_gaps`, kept by an
 *   erasure's `messages=delete`), less unsent ones (`messages_thread_unsent`, holding only those) and
 *   less the user's own and those of users they block (`messages_thread_author`): ranges that are empty
 *   but for a thread marked unread before the user's own replies, or a blocked user's replies.
 */
export class ThreadReadState1763691150000 implements MigrationInterface {
  name = 'ThreadReadState1763691150000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN thread_no bigint`);
    await q.query(`ALTER TABLE message_threads ADD COLUMN reply_no bigint NOT NULL DEFAULT 0`);
    await q.query(`
      UPDATE messages m SET thread_no = x.n
        FROM (SELECT r.id, row_number() OVER (PARTITION BY r.thread_id ORDER BY r.created_at, r.id) AS n
                FROM messages r WHERE r.thread_id IS NOT NULL AND NOT r.shadowed) x
       WHERE m.id = x.id`);
    await q.query(`
      UPDATE message_threads t SET reply_no = x.n
        FROM (SELECT r.thread_id, max(r.thread_no) AS n FROM messages r WHERE r.thread_no IS NOT NULL GROUP BY r.thread_id) x
       WHERE t.root_id = x.thread_id`);
    await q.query(
      `CREATE INDEX messages_thread_unsent ON messages (thread_id, created_at) WHERE thread_id IS NOT NULL AND deleted_at IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX messages_thread_author ON messages (thread_id, user_id, created_at) WHERE thread_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE message_thread_gaps (
        root_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        thread_no bigint NOT NULL,
        PRIMARY KEY (root_id, thread_no)
      )`);
    await q.query(`
      CREATE TABLE thread_reads (
        root_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        channel_id uuid NOT NULL,
        participant boolean NOT NULL,
        read_at timestamptz NOT NULL,
        read_id uuid NOT NULL,
        PRIMARY KEY (root_id, user_id),
        CONSTRAINT thread_reads_member_fkey FOREIGN KEY (channel_id, user_id)
          REFERENCES channel_members (channel_id, user_id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX thread_reads_user ON thread_reads (user_id, channel_id)`);
    // the participants of the threads there are: repliers at their last reply, then the roots' authors
    // and the users mentioned in a thread (before the mentioning message), members only
    await q.query(`
      INSERT INTO thread_reads (root_id, user_id, channel_id, participant, read_at, read_id)
      SELECT r.thread_id, r.user_id, r.channel_id, true, max(r.created_at), '${AFTER_EVERY_ID}'
        FROM messages r JOIN channel_members cm ON cm.channel_id = r.channel_id AND cm.user_id = r.user_id
       WHERE r.thread_no IS NOT NULL
       GROUP BY r.thread_id, r.user_id, r.channel_id`);
    await q.query(`
      INSERT INTO thread_reads (root_id, user_id, channel_id, participant, read_at, read_id)
      SELECT t.root_id, root.user_id, t.channel_id, true, root.created_at, '${AFTER_EVERY_ID}'
        FROM message_threads t JOIN messages root ON root.id = t.root_id
        JOIN channel_members cm ON cm.channel_id = t.channel_id AND cm.user_id = root.user_id
       WHERE t.reply_no > 0
      ON CONFLICT DO NOTHING`);
    await q.query(`
      INSERT INTO thread_reads (root_id, user_id, channel_id, participant, read_at, read_id)
      SELECT DISTINCT ON (x.root_id, mm.user_id) x.root_id, mm.user_id, x.channel_id, true, x.created_at, x.id
        FROM (SELECT t.root_id, t.channel_id, m.id, m.created_at FROM message_threads t
                JOIN messages m ON m.id = t.root_id WHERE t.reply_no > 0
              UNION ALL
              SELECT t.root_id, t.channel_id, m.id, m.created_at FROM message_threads t
                JOIN messages m ON m.thread_id = t.root_id WHERE t.reply_no > 0) x
        JOIN message_mentions mm ON mm.message_id = x.id
        JOIN channel_members cm ON cm.channel_id = x.channel_id AND cm.user_id = mm.user_id
       ORDER BY x.root_id, mm.user_id, x.created_at, x.id
      ON CONFLICT DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE thread_reads`);
    await q.query(`DROP TABLE message_thread_gaps`);
    await q.query(`DROP INDEX messages_thread_author`);
    await q.query(`DROP INDEX messages_thread_unsent`);
    await q.query(`ALTER TABLE message_threads DROP COLUMN reply_no`);
    await q.query(`ALTER TABLE messages DROP COLUMN thread_no`);
  }
}
