import { MigrationInterface, QueryRunner } from 'typeorm';
import { SEND_MESSAGE_WITH_SHADOW } from './1763691000000-bans';

const SIGNATURE =
  'chat_send_message(uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text, uuid[], uuid, boolean, jsonb, boolean, boolean, uuid[], text[], jsonb[])';

/**
 * Less work per message insert, the same rules (issue 10):
 *
 * - `messages_idempotency` held an entry for every message, though only sends with an idempotency key
 *   can conflict (a NULL key never equals another): it becomes a unique index partial on
 *   `idempotency_key IS NOT NULL`, so a send without a key maintains one btree fewer. The replay
 *   lookups (`idempotency_key = $n`) imply the predicate and still use it.
 * - `messages` had two foreign keys, to `channels (id)` and to `workspaces (id)`, each taking a KEY SHARE
 *   row lock per insert; the workspace row is the same for every sender of a workspace, so concurrent
 *   sends piled up on it (a MultiXact per overlapping lock). One composite key, `(channel_id,
 *   workspace_id)` → `channels (id, workspace_id)` ON DELETE CASCADE, replaces both: it checks the
 *   channel row the send already holds, keeps the deletes as they were (a workspace's deletion
 *   cascades to its channels and from them to their messages), and states a rule the old pair did not:
 *   a message's workspace is its channel's workspace.
 * - chat_send_message inserts a message without a key with a plain INSERT (no ON CONFLICT, so without
 *   the speculative insertion it costs), and one with a key through the partial index. Its text is
 *   src/database/functions/chat_send_message.sql, applied after the migrations (runMigrations): this
 *   migration first shipped it as migration 1763691000000's text with the insert replaced, and the
 *   databases it ran on have that text; the file then states it (byte for byte) and is what changes it.
 * - `events` keeps its workspace key: workspace events have no channel, so nothing else implies it.
 */
export class LeanMessageWrites1763691071000 implements MigrationInterface {
  name = 'LeanMessageWrites1763691071000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channels ADD CONSTRAINT channels_id_workspace UNIQUE (id, workspace_id)`);
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_channel_workspace_fkey FOREIGN KEY (channel_id, workspace_id)
         REFERENCES channels (id, workspace_id) ON DELETE CASCADE`,
    );
    await q.query(
      `ALTER TABLE messages DROP CONSTRAINT messages_channel_id_fkey, DROP CONSTRAINT messages_workspace_id_fkey`,
    );
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_idempotency`);
    await q.query(
      `CREATE UNIQUE INDEX messages_idempotency ON messages (workspace_id, sender_key, idempotency_key)
         WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // the function of migration 1763691000000, whose ON CONFLICT names the constraint restored below
    await q.query(`DROP FUNCTION ${SIGNATURE}`);
    await q.query(SEND_MESSAGE_WITH_SHADOW);
    await q.query(`DROP INDEX messages_idempotency`);
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_idempotency UNIQUE (workspace_id, sender_key, idempotency_key)`,
    );
    await q.query(
      `ALTER TABLE messages
         ADD CONSTRAINT messages_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE,
         ADD CONSTRAINT messages_channel_id_fkey FOREIGN KEY (channel_id) REFERENCES channels (id) ON DELETE CASCADE`,
    );
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_channel_workspace_fkey`);
    await q.query(`ALTER TABLE channels DROP CONSTRAINT channels_id_workspace`);
  }
}
