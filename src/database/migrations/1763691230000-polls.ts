import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Polls (CONTRACT §28): a poll is a message of type `poll` (its content the question) with a `polls`
 * row, its options in order, and one `poll_votes` row per option a user chose. The counters
 * (`vote_count`, `total_votes`, `voter_count`) change in the vote's transaction, under the poll row's
 * lock, and never go below zero. A vote's option is one of its poll's (the composite key). `polls_closing` holds the open polls with a `closes_at`, for the scheduler's probe.
 */
export class Polls1763691230000 implements MigrationInterface {
  name = 'Polls1763691230000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_type_check`);
    // NOT VALID, then VALIDATE: the scan of messages runs without blocking writes
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_type_check CHECK (type IN ('text', 'image', 'file', 'system', 'poll')) NOT VALID`,
    );
    await q.query(`ALTER TABLE messages VALIDATE CONSTRAINT messages_type_check`);
    await q.query(`
      CREATE TABLE polls (
        id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        message_id uuid NOT NULL,
        created_by uuid,
        question text NOT NULL,
        multiple_choice boolean NOT NULL DEFAULT false,
        anonymous boolean NOT NULL DEFAULT false,
        closes_at timestamptz,
        closed_at timestamptz,
        total_votes integer NOT NULL DEFAULT 0,
        voter_count integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        CONSTRAINT polls_pkey PRIMARY KEY (id),
        CONSTRAINT polls_counts CHECK (total_votes >= 0 AND voter_count >= 0),
        CONSTRAINT polls_message UNIQUE (message_id),
        CONSTRAINT polls_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE,
        CONSTRAINT polls_message_id_fkey FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE,
        CONSTRAINT polls_created_by_fkey FOREIGN KEY (created_by) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX polls_closing ON polls (closes_at) WHERE closed_at IS NULL AND closes_at IS NOT NULL`,
    );
    await q.query(`CREATE INDEX polls_workspace ON polls (workspace_id)`);
    await q.query(`CREATE INDEX polls_creator ON polls (created_by)`);
    await q.query(`
      CREATE TABLE poll_options (
        id uuid NOT NULL,
        poll_id uuid NOT NULL,
        position smallint NOT NULL,
        text text NOT NULL,
        vote_count integer NOT NULL DEFAULT 0,
        CONSTRAINT poll_options_pkey PRIMARY KEY (id),
        CONSTRAINT poll_options_count CHECK (vote_count >= 0),
        CONSTRAINT poll_options_position UNIQUE (poll_id, position),
        CONSTRAINT poll_options_of_poll UNIQUE (poll_id, id),
        CONSTRAINT poll_options_poll_id_fkey FOREIGN KEY (poll_id) REFERENCES polls(id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE poll_votes (
        poll_id uuid NOT NULL,
        user_id uuid NOT NULL,
        option_id uuid NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT poll_votes_pkey PRIMARY KEY (poll_id, user_id, option_id),
        CONSTRAINT poll_votes_poll_id_fkey FOREIGN KEY (poll_id) REFERENCES polls(id) ON DELETE CASCADE,
        CONSTRAINT poll_votes_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE,
        CONSTRAINT poll_votes_option_fkey FOREIGN KEY (poll_id, option_id) REFERENCES poll_options(poll_id, id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX poll_votes_recent ON poll_votes (poll_id, created_at, user_id)`);
    await q.query(`CREATE INDEX poll_votes_option ON poll_votes (option_id, created_at, user_id)`);
    await q.query(`CREATE INDEX poll_votes_user ON poll_votes (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE poll_votes`);
    await q.query(`DROP TABLE poll_options`);
    await q.query(`DROP TABLE polls`);
    await q.query(`DELETE FROM messages WHERE type = 'poll'`);
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_type_check`);
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_type_check CHECK (type IN ('text', 'image', 'file', 'system'))`,
    );
  }
}
