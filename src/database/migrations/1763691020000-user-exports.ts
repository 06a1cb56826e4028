import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CONTRACT §20, user data exports.
 *
 * - `user_exports`: one row per requested export. A worker claims a pending row with a lease
 *   (`lease_owner`, `lease_until`, `attempts`), streams the document to the storage driver under
 *   `object_key` and marks it ready with `expires_at` (7 days on); the sweeper deletes the object and
 *   the row after that. `user_external_id` is kept so the export still answers its owner's id while
 *   the user record is being erased; `user_id` goes null with the user (ON DELETE SET NULL), and the
 *   sweeper then removes the export and its object, so an erasure takes its exports along.
 * - `user_exports_pending`: at most one pending export per user, so repeated requests while one is
 *   being built answer that one (race-free: INSERT ... ON CONFLICT DO NOTHING) instead of queueing
 *   one full build each. `user_exports_user` serves the ON DELETE SET NULL and the orphan scan;
 *   `user_exports_expiry` the sweeper's scans (due rows, and pending rows whose job was lost).
 * - `reactions_user (user_id)` becomes `(user_id, message_id)`: the export reads a user's reactions
 *   in keyset pages on message_id, which the single-column index could only serve by sorting every
 *   reaction of the user per page. Everything that used the old index uses the new one's prefix.
 */
export class UserExports1763691020000 implements MigrationInterface {
  name = 'UserExports1763691020000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_exports (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        user_external_id text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'failed')),
        object_key text,
        size_bytes bigint,
        error text,
        attempts integer NOT NULL DEFAULT 0,
        lease_owner uuid,
        lease_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        ready_at timestamptz,
        expires_at timestamptz,
        CHECK ((status = 'pending') = (expires_at IS NULL))
      )`);
    await q.query(`CREATE INDEX user_exports_user ON user_exports (user_id, created_at)`);
    await q.query(
      `CREATE UNIQUE INDEX user_exports_pending ON user_exports (user_id) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX user_exports_expiry ON user_exports (status, expires_at)`);
    await q.query(`CREATE INDEX reactions_user_message ON reactions (user_id, message_id)`);
    await q.query(`DROP INDEX reactions_user`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX reactions_user ON reactions (user_id)`);
    await q.query(`DROP INDEX reactions_user_message`);
    await q.query(`DROP TABLE user_exports`);
  }
}
