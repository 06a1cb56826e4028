import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Presigned uploads, push devices and the push relay's cursor.
 *
 * - `attachment_uploads`: one row per presign, keyed by the object key the service generated. It is
 *   what `attachment` metadata (CONTRACT §7) and `GET /files/<key>` read: type, size and file name as
 *   declared and signed at presign time.
 * - `devices`: push tokens. A token is unique per workspace (re-registering moves it to the caller);
 *   tokens may be up to 4,096 characters, longer than a btree entry may be, so the key is their SHA-256.
 * - the push relay's row in `event_relay_cursors` (the webhooks migration's table): the last
 *   (tx_id, position) of the event log it turned into push jobs. It starts at this migration's
 *   snapshot, so a deployment never pushes its old messages.
 */
export class Attachments1763690500000 implements MigrationInterface {
  name = 'Attachments1763690500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE attachment_uploads (
        key text PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid REFERENCES channels(id) ON DELETE SET NULL,
        user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        filename text NOT NULL,
        mime_type text NOT NULL,
        size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
        driver text NOT NULL,
        expires_at timestamptz NOT NULL,
        uploaded_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX attachment_uploads_workspace ON attachment_uploads (workspace_id, created_at)`,
    );

    await q.query(`
      CREATE TABLE devices (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        token_sha256 text NOT NULL,
        token text NOT NULL,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        platform text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, token_sha256)
      )`);
    await q.query(`CREATE INDEX devices_user ON devices (user_id, updated_at DESC)`);

    await q.query(
      `INSERT INTO event_relay_cursors (name, tx_id, position) VALUES ('push', pg_snapshot_xmin(pg_current_snapshot()), 0)
       ON CONFLICT (name) DO NOTHING`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM event_relay_cursors WHERE name = 'push'`);
    await q.query(`DROP TABLE devices`);
    await q.query(`DROP TABLE attachment_uploads`);
  }
}
