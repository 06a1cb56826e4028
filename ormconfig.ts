/**
 * The TypeORM DataSource for the TypeORM CLI (`npm run migration:generate -- src/database/migrations/<name>`,
 * `npx typeorm-ts-node-commonjs migration:show -d ormconfig.ts`). It points at PostgreSQL through
 * DATABASE_URL and uses the same migration list as the service.
 *
 * The service itself never reads this file: it opens the database (PostgreSQL or the embedded PGlite)
 * in src/infra/database/data-source.factory.ts and runs the migrations at start-up. To migrate
 * either kind of database from the command line use `npm run migration:run`.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { acceptSchemaColumnTypes } from './src/infra/database/column-types';
import { ENTITIES } from './src/database/entities';
import { MIGRATIONS } from './src/database/migrations';

const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error(
    'ormconfig.ts needs DATABASE_URL (postgresql://...). The embedded database is migrated by `npm run migration:run` or at start-up.',
  );
}

const dataSource = new DataSource({
  type: 'postgres',
  url,
  entities: ENTITIES,
  migrations: MIGRATIONS,
  migrationsTableName: 'migrations',
  synchronize: false,
  migrationsRun: false,
  logging: ['error', 'warn', 'migration'],
});

acceptSchemaColumnTypes(dataSource);

export default dataSource;
