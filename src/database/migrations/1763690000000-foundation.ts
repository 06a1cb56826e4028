import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspaces with rotating key pairs, users, and the event log (transactional outbox).
 *
 * The event log's global order is (tx_id, position): tx_id is the writing transaction's id and a
 * reader only reads rows whose tx_id is below the oldest transaction still running
 * (pg_snapshot_xmin), so an event committed late by a concurrent transaction is never skipped.
 */
export class Foundation1763690000000 implements MigrationInterface {
  name = 'Foundation1763690000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        settings jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE workspace_keys (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        api_key text NOT NULL UNIQUE,
        secret_sha256 text NOT NULL,
        secret_sealed text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz
      )`);
    await q.query(`CREATE INDEX workspace_keys_workspace ON workspace_keys (workspace_id)`);
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        external_id text NOT NULL,
        name text,
        avatar_url text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        last_seen_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_workspace_external UNIQUE (workspace_id, external_id)
      )`);
    await q.query(`
      CREATE TABLE events (
        position bigserial PRIMARY KEY,
        id uuid NOT NULL UNIQUE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid,
        seq bigint,
        type text NOT NULL,
        payload jsonb NOT NULL,
        audience uuid[],
        tx_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT events_channel_seq UNIQUE (channel_id, seq)
      )`);
    await q.query(`CREATE INDEX events_workspace_order ON events (workspace_id, tx_id, position)`);
    await q.query(`CREATE INDEX events_tx_order ON events (tx_id, position)`);
    await q.query(`CREATE INDEX events_created_at ON events (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP TABLE users`);
    await q.query(`DROP TABLE workspace_keys`);
    await q.query(`DROP TABLE workspaces`);
  }
}
