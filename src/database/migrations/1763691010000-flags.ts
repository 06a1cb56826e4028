import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CONTRACT §19, flags (reports) and their review queue.
 * - `flag_reviews`: one queue entry per target and review cycle. A partial unique index per target kind
 *   allows one *open* entry per message or user; every flag upserts into it (INSERT … ON CONFLICT), so
 *   concurrent flags of one target meet on one row, and a flag after a resolution opens a new entry.
 *   `flag_count`, `first_flagged_at` and `last_flagged_at` are kept on the row by that upsert, so a queue
 *   page reads no flags but the reasons.
 * - `flags`: one row per report. A user flags a target once, ever: UNIQUE (message_id, by_user) and
 *   (target_user_id, by_user); NULLs are distinct, so automatic moderation's flags (by_user NULL) and one
 *   kind's NULL target never collide. A flag is inserted before its entry's upsert (so the entry's row
 *   is locked only from that upsert to the commit), naming the entry it expects: `review_id`'s foreign
 *   key is checked at commit (DEFERRABLE INITIALLY DEFERRED).
 * - A message or user that goes (channel deletion, erasure) takes its entries and flags with it (CASCADE);
 *   a reporter who goes leaves the report, with by_user NULL, so the counts stay true.
 * - Resolutions are audited in `moderation_audit`, whose rows may now name no channel (a user entry)
 *   and no user (a message whose author was deleted), with the four resolution actions.
 */
export class Flags1763691010000 implements MigrationInterface {
  name = 'Flags1763691010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE flag_reviews (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        target_type text NOT NULL CHECK (target_type IN ('message', 'user')),
        message_id uuid REFERENCES messages(id) ON DELETE CASCADE,
        target_user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
        flag_count integer NOT NULL,
        first_flagged_at timestamptz NOT NULL,
        last_flagged_at timestamptz NOT NULL,
        resolved_at timestamptz,
        resolution_action text CHECK (resolution_action IN ('dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user')),
        resolution_duration_seconds integer,
        CONSTRAINT flag_reviews_target CHECK (
          (target_type = 'message' AND message_id IS NOT NULL AND target_user_id IS NULL)
          OR (target_type = 'user' AND target_user_id IS NOT NULL AND message_id IS NULL)),
        CONSTRAINT flag_reviews_resolution CHECK ((status = 'resolved') = (resolved_at IS NOT NULL AND resolution_action IS NOT NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX flag_reviews_open_message ON flag_reviews (message_id) WHERE status = 'open'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX flag_reviews_open_user ON flag_reviews (target_user_id) WHERE status = 'open'`,
    );
    // the cascades from messages and users (resolved entries are not in the partial indexes above)
    await q.query(
      `CREATE INDEX flag_reviews_message ON flag_reviews (message_id) WHERE message_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX flag_reviews_user ON flag_reviews (target_user_id) WHERE target_user_id IS NOT NULL`,
    );
    // the queue's two pages: open oldest first (ids are UUIDv7), resolved most recently resolved first
    await q.query(
      `CREATE INDEX flag_reviews_open_queue ON flag_reviews (workspace_id, id) WHERE status = 'open'`,
    );
    await q.query(
      `CREATE INDEX flag_reviews_resolved_queue ON flag_reviews (workspace_id, resolved_at DESC, id DESC) WHERE status = 'resolved'`,
    );

    await q.query(`
      CREATE TABLE flags (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        review_id uuid NOT NULL REFERENCES flag_reviews(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        target_type text NOT NULL CHECK (target_type IN ('message', 'user')),
        message_id uuid REFERENCES messages(id) ON DELETE CASCADE,
        target_user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        by_user uuid REFERENCES users(id) ON DELETE SET NULL,
        reason text,
        created_at timestamptz NOT NULL,
        CONSTRAINT flags_target CHECK ((message_id IS NULL) <> (target_user_id IS NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX flags_message_by_user ON flags (message_id, by_user)`);
    await q.query(`CREATE UNIQUE INDEX flags_user_by_user ON flags (target_user_id, by_user)`);
    await q.query(`CREATE INDEX flags_review ON flags (review_id, created_at)`);
    await q.query(`CREATE INDEX flags_by_user ON flags (by_user) WHERE by_user IS NOT NULL`);

    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN channel_id DROP NOT NULL`);
    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN channel_external_id DROP NOT NULL`);
    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN user_id DROP NOT NULL`);
    await q.query(`ALTER TABLE moderation_audit DROP CONSTRAINT moderation_audit_action_check`);
    await q.query(`
      ALTER TABLE moderation_audit ADD CONSTRAINT moderation_audit_action_check
        CHECK (action IN ('flag', 'mask', 'reject', 'auto_mute', 'dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM moderation_audit WHERE action IN ('dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user')`,
    );
    await q.query(`ALTER TABLE moderation_audit DROP CONSTRAINT moderation_audit_action_check`);
    await q.query(
      `ALTER TABLE moderation_audit ADD CONSTRAINT moderation_audit_action_check CHECK (action IN ('flag', 'mask', 'reject', 'auto_mute'))`,
    );
    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN user_id SET NOT NULL`);
    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN channel_external_id SET NOT NULL`);
    await q.query(`ALTER TABLE moderation_audit ALTER COLUMN channel_id SET NOT NULL`);
    await q.query(`DROP TABLE flags`);
    await q.query(`DROP TABLE flag_reviews`);
  }
}
