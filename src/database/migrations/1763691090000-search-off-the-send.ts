import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search indexed off the send's commit path (issue 24). A send no longer computes a search document
 * nor inserts a dozen GIN entries under its channel's lock: `message_search` holds one document per
 * message, written in batches by the search indexer (a log follower, src/search/search-indexer.ts) with
 * its cursor (`event_relay_cursors` row 'search') in the same statement, so for any snapshot the
 * documents and the cursor agree. A search matches the indexed documents and computes the documents of
 * the `message.created` events after that cursor at query time: a message is findable as soon as its
 * send commits. An edit rewrites the document in its own statement; an unsend writes a NULL document
 * (nothing matches it, and a late indexer insert cannot bring the old text back). The channel id is
 * kept beside the document so a user's search across channels can intersect the GIN scan with the
 * channel index (a BitmapAnd, as it did with the messages' index before).
 *
 * `messages.search_doc` stops being generated and loses its index; the column stays one release for
 * instances of the previous one during a rolling deploy (their search reads it), and goes with the next.
 */
export class SearchOffTheSend1763691090000 implements MigrationInterface {
  name = 'SearchOffTheSend1763691090000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE message_search (
        message_id uuid PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        doc tsvector
      )`);
    await q.query(
      `INSERT INTO message_search (message_id, channel_id, doc)
       SELECT id, channel_id, search_doc FROM messages WHERE search_doc IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX message_search_doc ON message_search USING gin (doc) WITH (fastupdate = off)`,
    );
    await q.query(`CREATE INDEX message_search_channel ON message_search (channel_id)`);
    await q.query(
      `INSERT INTO event_relay_cursors (name, tx_id, position) VALUES ('search', pg_snapshot_xmin(pg_current_snapshot()), 0)
       ON CONFLICT (name) DO NOTHING`,
    );
    await q.query(`DROP INDEX messages_search`);
    await q.query(`ALTER TABLE messages ALTER COLUMN search_doc DROP EXPRESSION`);
    await q.query(
      `DELETE FROM typeorm_metadata WHERE type = 'GENERATED_COLUMN' AND "table" = 'messages' AND name = 'search_doc'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN search_doc`);
    await q.query(`
      ALTER TABLE messages ADD COLUMN search_doc tsvector GENERATED ALWAYS AS (CASE WHEN deleted_at IS NULL
        THEN search_document(content) || array_to_tsvector(ARRAY['#' || channel_id::text]) END) STORED`);
    await q.query(`CREATE INDEX messages_search ON messages USING gin (search_doc) WITH (fastupdate = off)`);
    await q.query(
      `INSERT INTO typeorm_metadata (type, database, schema, "table", name, value)
       VALUES ('GENERATED_COLUMN', current_database(), current_schema(), 'messages', 'search_doc',
               'CASE WHEN deleted_at IS NULL THEN search_document(content) || array_to_tsvector(ARRAY[''#'' || channel_id::text]) END')`,
    );
    await q.query(`DELETE FROM event_relay_cursors WHERE name = 'search'`);
    await q.query(`DROP TABLE message_search`);
  }
}
