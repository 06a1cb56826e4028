import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The moderation audit trail (CONTRACT §4): one row per rule that acted on a message, plus one per
 * automatic mute. Channel, user and message are kept as plain ids (with the external ids the filters
 * match on) rather than foreign keys: the trail outlives a deleted channel, user or rejected message.
 */
export class Moderation1763690600000 implements MigrationInterface {
  name = 'Moderation1763690600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE moderation_audit (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        channel_external_id text NOT NULL,
        user_id uuid NOT NULL,
        user_external_id text NOT NULL,
        message_id uuid,
        rule text NOT NULL,
        action text NOT NULL CHECK (action IN ('flag', 'mask', 'reject', 'auto_mute')),
        excerpt text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // pages are newest first by id (UUIDv7, time-ordered), per workspace and per filter
    await q.query(`CREATE INDEX moderation_audit_workspace ON moderation_audit (workspace_id, id DESC)`);
    await q.query(
      `CREATE INDEX moderation_audit_user ON moderation_audit (workspace_id, user_external_id, id DESC)`,
    );
    await q.query(
      `CREATE INDEX moderation_audit_channel ON moderation_audit (workspace_id, channel_id, id DESC)`,
    );
    await q.query(
      `CREATE INDEX moderation_audit_channel_ext ON moderation_audit (workspace_id, channel_external_id, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE moderation_audit`);
  }
}
