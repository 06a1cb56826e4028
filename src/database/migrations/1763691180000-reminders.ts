import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reminders (CONTRACT §25): a user's reminder about a message, private to them.
 * - One per (user, message): `reminders_one_per_message`; a second is 409 REMINDER_EXISTS.
 * - The membership owns it ((channel_id, user_id) references `channel_members` ON DELETE CASCADE: leaving
 *   deletes it), and so does the message (removed outright: cascade; unsent: deleted by the unsend).
 * - Status is derived: `remind_at` null is saved for later, set and not yet fired upcoming, fired due.
 * - `reminders_due` holds only upcoming reminders, by their time: the scheduler's one probe per pass.
 * - `reminders_list`: the user's reminders newest first (at most 1,000 each: filters read them all).
 */
export class Reminders1763691180000 implements MigrationInterface {
  name = 'Reminders1763691180000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reminders (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        user_id uuid NOT NULL,
        message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        remind_at timestamptz,
        fired_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT reminders_member_fkey FOREIGN KEY (channel_id, user_id)
          REFERENCES channel_members (channel_id, user_id) ON DELETE CASCADE,
        CONSTRAINT reminders_one_per_message UNIQUE (user_id, message_id)
      )`);
    await q.query(
      `CREATE INDEX reminders_due ON reminders (remind_at) WHERE remind_at IS NOT NULL AND fired_at IS NULL`,
    );
    await q.query(`CREATE INDEX reminders_list ON reminders (user_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX reminders_message ON reminders (message_id)`);
    await q.query(`CREATE INDEX reminders_member ON reminders (channel_id, user_id)`);
    await q.query(`CREATE INDEX reminders_workspace ON reminders (workspace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reminders`);
  }
}
