import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drafts (CONTRACT §24): one per (user, channel, thread or none), private to the user.
 * - `drafts_scope` (UNIQUE NULLS NOT DISTINCT): one draft per scope, `thread_id` null for the channel's
 *   own composer; a save is an upsert on it.
 * - The membership is the parent row: (channel_id, user_id) references `channel_members` ON DELETE
 *   CASCADE, so leaving, being removed, the channel's deletion and an erasure (which leaves every
 *   channel) delete the user's drafts there with the membership, whichever path removes it.
 * - A stored send by the user into the scope deletes the draft in the send's statement
 *   (chat_send_message, chat_send_messages); a save and the send meet on the draft's row.
 * - `drafts_list`: GET /v1/me/drafts, newest `updated_at` first, keyset on (updated_at, id).
 */
export class Drafts1763691140000 implements MigrationInterface {
  name = 'Drafts1763691140000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE drafts (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        user_id uuid NOT NULL,
        thread_id uuid,
        parent_id uuid,
        content text NOT NULL,
        attachment_url text,
        mention_ids uuid[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT drafts_member_fkey FOREIGN KEY (channel_id, user_id)
          REFERENCES channel_members (channel_id, user_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE UNIQUE INDEX drafts_scope ON drafts (user_id, channel_id, thread_id) NULLS NOT DISTINCT`,
    );
    await q.query(`CREATE INDEX drafts_list ON drafts (user_id, updated_at DESC, id DESC)`);
    await q.query(`CREATE INDEX drafts_workspace ON drafts (workspace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE drafts`);
  }
}
