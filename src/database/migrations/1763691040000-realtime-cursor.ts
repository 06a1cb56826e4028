import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The realtime publisher's position in the event log moves from Redis into its row of
 * `event_relay_cursors` (as the push relay's), so a Redis restart or a new leader resumes where
 * publishing stopped instead of at the newest event. It starts at the oldest transaction still running.
 */
export class RealtimeCursor1763691040000 implements MigrationInterface {
  name = 'RealtimeCursor1763691040000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `INSERT INTO event_relay_cursors (name, tx_id, position) VALUES ('realtime', pg_snapshot_xmin(pg_current_snapshot()), 0)
       ON CONFLICT (name) DO NOTHING`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM event_relay_cursors WHERE name = 'realtime'`);
  }
}
