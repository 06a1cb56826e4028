import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `schema_functions`: which text of each SQL function (src/database/functions/<name>.sql) the database
 * runs, by the file's sha256. runMigrations applies, after the migrations, each file whose checksum
 * differs from its row here or that has none (src/infra/database/schema-functions.ts). Like
 * `migrations`, the table belongs to that machinery, not to the entities.
 */
export class SchemaFunctions1763691080000 implements MigrationInterface {
  name = 'SchemaFunctions1763691080000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE schema_functions (
        name text PRIMARY KEY,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE schema_functions`);
  }
}
