import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled messages (CONTRACT §25): a user's send kept until `scheduled_at`, private to them.
 * - The user owns it, and so does the channel (a deleted channel or user takes it along); leaving the
 *   channel does not: its firing is refused then (NOT_A_MEMBER) and it stays listed as failed.
 * - `status` is `pending` (to fire) or `failed` (refused when it fired, `error` says why); a sent one is
 *   deleted in the send's transaction.
 * - `by_user`: scheduled (or last changed) through the user's own token, sent as theirs then; `run_hooks`:
 *   a backend's that asked for the pre-send hook. `attempts`: firings that ended in an unexpected error.
 * - A firing worker holds it by `claim` until `claimed_until` (the send runs outside the claim's
 *   transaction: it may call the pre-send hook); the send deletes the row only while its claim holds,
 *   so it is sent once even when a claim runs out.
 * - `scheduled_messages_due` holds only pending ones by their time: the scheduler's one probe per pass.
 * - `scheduled_messages_replay`: (user, idempotency_key) is unique while the scheduled message exists.
 */
export class ScheduledMessages1763691190000 implements MigrationInterface {
  name = 'ScheduledMessages1763691190000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE scheduled_messages (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        by_user boolean NOT NULL,
        run_hooks boolean NOT NULL DEFAULT false,
        content text NOT NULL,
        attachment_url text,
        parent_id uuid,
        thread_id uuid,
        show_in_channel boolean NOT NULL DEFAULT false,
        mention_ids uuid[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}',
        idempotency_key text,
        scheduled_at timestamptz NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        error jsonb,
        claim uuid,
        claimed_until timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT scheduled_messages_status CHECK (status IN ('pending', 'failed')),
        CONSTRAINT scheduled_messages_replay UNIQUE (user_id, idempotency_key)
      )`);
    await q.query(
      `CREATE INDEX scheduled_messages_due ON scheduled_messages (scheduled_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX scheduled_messages_list ON scheduled_messages (user_id, scheduled_at, id)`);
    await q.query(`CREATE INDEX scheduled_messages_channel ON scheduled_messages (channel_id)`);
    await q.query(`CREATE INDEX scheduled_messages_workspace ON scheduled_messages (workspace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scheduled_messages`);
  }
}
