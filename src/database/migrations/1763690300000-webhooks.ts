import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbound webhooks: subscriptions, one delivery row per (webhook, event), one row per HTTP attempt,
 * and the cursors of the relays that read the event log.
 *
 * `webhooks.created_snapshot` is the snapshot of the creating statement: an event whose transaction is
 * visible in it was committed before the webhook existed and is never delivered to it; every event
 * committed later is. `event_relay_cursors` holds, per relay, the last (tx_id, position) it turned
 * into deliveries; the relay locks its row, so instances take turns.
 */
export class Webhooks1763690300000 implements MigrationInterface {
  name = 'Webhooks1763690300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        description text,
        enabled boolean NOT NULL DEFAULT true,
        signing text NOT NULL DEFAULT 'signing_secret' CHECK (signing IN ('signing_secret', 'api_secret')),
        secret_sealed text,
        consecutive_failures integer NOT NULL DEFAULT 0,
        disabled_at timestamptz,
        disabled_reason text,
        created_snapshot pg_snapshot NOT NULL DEFAULT pg_current_snapshot(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_workspace ON webhooks (workspace_id, id)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL,
        event_id uuid NOT NULL,
        event text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'permanently_failed')),
        attempts integer NOT NULL DEFAULT 0,
        cycle_start integer NOT NULL DEFAULT 0,
        response_status integer,
        response_body text,
        error text,
        next_attempt_at timestamptz DEFAULT now(),
        lease_token uuid,
        lease_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_deliveries_once UNIQUE (webhook_id, event_id)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, id DESC)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_status ON webhook_deliveries (webhook_id, status, id DESC)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );

    await q.query(`
      CREATE TABLE webhook_attempts (
        id uuid PRIMARY KEY,
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL,
        response_status integer,
        response_body text,
        error text
      )`);
    await q.query(`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt)`);

    await q.query(`
      CREATE TABLE event_relay_cursors (
        name text PRIMARY KEY,
        tx_id xid8 NOT NULL,
        position bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO event_relay_cursors (name, tx_id, position) VALUES ('webhooks', '0', 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_relay_cursors`);
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
