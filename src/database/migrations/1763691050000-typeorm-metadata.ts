import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Records the expression of `messages.search_doc` (migration 1763690400000) in TypeORM's own
 * `typeorm_metadata` table, so the entities (src/database/entities.ts) can be compared with the schema
 * (`npm run check:schema`, `npm run migration:generate`).
 *
 * TypeORM does not read a generated column's expression back from PostgreSQL (whose text it normalizes):
 * it looks it up in `typeorm_metadata`, a table it creates itself, like `migrations`, before running
 * migrations once an entity has a generated column (created here too if missing). The row holds the
 * exact words of the Message entity of the time, as TypeORM would have written them
 * had it created the column. TypeORM keys the row by database name: in a copy of the database under
 * another name a schema diff sees the expression as changed (update the row's `database` there).
 * Migration 1763691090000 removes the row with the expression (the column is no longer generated).
 */
export class TypeormMetadata1763691050000 implements MigrationInterface {
  name = 'TypeormMetadata1763691050000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS typeorm_metadata (
        type character varying NOT NULL,
        database character varying,
        schema character varying,
        "table" character varying,
        name character varying,
        value text
      )`);
    await q.query(
      `INSERT INTO typeorm_metadata (type, database, schema, "table", name, value)
       VALUES ('GENERATED_COLUMN', current_database(), current_schema(), 'messages', 'search_doc', $1)`,
      [
        "CASE WHEN deleted_at IS NULL THEN search_document(content) || array_to_tsvector(ARRAY['#' || channel_id::text]) END",
      ],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM typeorm_metadata WHERE type = 'GENERATED_COLUMN' AND "table" = 'messages' AND name = 'search_doc'`,
    );
  }
}
