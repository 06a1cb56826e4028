import { MigrationInterface, QueryRunner } from 'typeorm';
import { SEND_MESSAGE_WITH_SHADOW } from './1763691000000-bans';

const COLUMNS = `(id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no,
                                     thread_id, show_in_channel, metadata, shadowed)`;
const VALUES = `(v_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, v_created, v_channel_no, v_sender_no,
                p_thread, CASE WHEN p_thread IS NOT NULL THEN v_in_channel END, p_metadata, v_shadowed)`;

/** The insert of migration 1763691000000's chat_send_message. */
const INSERT_BEFORE = `INSERT INTO messages AS msg ${COLUMNS}
        VALUES ${VALUES}
        ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
        RETURNING msg.id INTO v_id;`;

/**
 * Without a key no insert can conflict: a plain INSERT, without the speculative insertion (arbiter
 * probe, insertion token, confirmation record) that ON CONFLICT costs. With one, the conflict is
 * arbitrated by the partial index.
 */
const INSERT_LEAN = `IF p_idempotency_key IS NULL THEN
          INSERT INTO messages ${COLUMNS}
          VALUES ${VALUES};
        ELSE
          INSERT INTO messages AS msg ${COLUMNS}
          VALUES ${VALUES}
          ON CONFLICT (workspace_id, sender_key, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING msg.id INTO v_id;
        END IF;`;

if (!SEND_MESSAGE_WITH_SHADOW.includes(INSERT_BEFORE))
  throw new Error('chat_send_message of migration 1763691000000: its message insert was not found');

/** chat_send_message with the same signature and answers; only the message insert differs. */
export const SEND_MESSAGE_LEAN = SEND_MESSAGE_WITH_SHADOW.replace(
  'CREATE FUNCTION',
  'CREATE OR REPLACE FUNCTION',
).replace(INSERT_BEFORE, INSERT_LEAN);

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
 * - chat_send_message inserts a message without a key with a plain INSERT (no ON CONFLICT), and one
 *   with a key through the partial index.
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
    await q.query(SEND_MESSAGE_LEAN);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(SEND_MESSAGE_LEAN.replace(INSERT_LEAN, INSERT_BEFORE));
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
