import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Link previews on messages (CONTRACT §26): `previews`, what the worker found for the message's links
 * ([] until then), and `skip_previews`, set by a send that opted out (kept on a scheduled message until
 * it is sent), and `previews_allow_private`: the instance that took the send or the last edit allows
 * private network targets, so its links are fetched under that policy by whichever worker fetches
 * them (as a webhook keeps the policy it was registered under). The columns have constant defaults, so
 * adding them rewrites no row. The previews follower's cursor starts at the log's present: messages
 * sent before this migration are not enriched.
 */
export class MessagePreviews1763691220000 implements MigrationInterface {
  name = 'MessagePreviews1763691220000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN previews jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await q.query(`ALTER TABLE messages ADD COLUMN skip_previews boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE messages ADD COLUMN previews_allow_private boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE scheduled_messages ADD COLUMN skip_previews boolean NOT NULL DEFAULT false`);
    await q.query(
      `INSERT INTO event_relay_cursors (name, tx_id, position) VALUES ('previews', pg_snapshot_xmin(pg_current_snapshot()), 0)
       ON CONFLICT (name) DO NOTHING`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM event_relay_cursors WHERE name = 'previews'`);
    await q.query(`ALTER TABLE scheduled_messages DROP COLUMN skip_previews`);
    await q.query(`ALTER TABLE messages DROP COLUMN previews_allow_private`);
    await q.query(`ALTER TABLE messages DROP COLUMN skip_previews`);
    await q.query(`ALTER TABLE messages DROP COLUMN previews`);
  }
}
