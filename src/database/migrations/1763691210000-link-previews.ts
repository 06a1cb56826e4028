import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Link previews' cache (CONTRACT §26): per workspace and URL, what the fetch found (`preview` null: no
 * preview), kept for an hour; `link_previews_expiry` lets the scheduler's sweep remove expired rows a
 * batch at a time.
 */
export class LinkPreviews1763691210000 implements MigrationInterface {
  name = 'LinkPreviews1763691210000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE link_previews (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        url text NOT NULL,
        preview jsonb,
        fetched_at timestamptz NOT NULL,
        CONSTRAINT link_previews_pkey PRIMARY KEY (workspace_id, url)
      )`);
    await q.query(`CREATE INDEX link_previews_expiry ON link_previews (fetched_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE link_previews`);
  }
}
