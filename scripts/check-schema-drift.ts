/**
 * `npm run check:schema`: the entities (src/database/entities.ts) state exactly the schema the migrations
 * build. On a fresh database, created on the PostgreSQL server of DATABASE_URL (default
 * postgresql://postgres@127.0.0.1:5432/postgres, used only to create and drop it), or with `--embedded`
 * in an in-memory PGlite:
 *
 * 1. every migration runs, as at the service's start-up;
 * 2. TypeORM's schema diff (the queries `migration:generate` would write) must be empty;
 * 3. every table has an entity (the diff only looks at tables that have one), every index an entity
 *    declares with `synchronize: false` exists;
 * 4. what that diff does not compare must agree as well: each index TypeORM manages (column order,
 *    uniqueness, WHERE), unique constraint, CHECK, foreign key (columns, ON DELETE, deferrability),
 *    primary key column order and generated column is built the way TypeORM would build it, under a
 *    throwaway name in a transaction that is rolled back, and compared with PostgreSQL's own text of
 *    the original;
 * 5. the functions agree with src/database/functions: each file's function has its file's text
 *    (`pg_get_functiondef` of what the file creates, in a transaction rolled back, against the
 *    database's), and every function of the schema (not an extension's) has a file.
 *
 * Exits 1 listing every difference. The database is dropped at the end.
 */
import 'reflect-metadata';
import { randomBytes } from 'crypto';
import { Client } from 'pg';
import {
  DataSource,
  EntityMetadata,
  QueryRunner,
  TableCheck,
  TableColumn,
  TableForeignKey,
  TableIndex,
  TableUnique,
} from 'typeorm';
import { openDatabase, runMigrations, type DatabaseHandle } from '../src/infra/database/data-source.factory';
import { functionDrift, loadFunctionFiles } from '../src/database/schema-functions';

/** Tables that are TypeORM's own or the function step's (schema-functions.ts), not the schema's. */
const TYPEORM_TABLES = new Set(['migrations', 'typeorm_metadata', 'schema_functions']);

async function main(): Promise<void> {
  const embedded = process.argv.includes('--embedded');
  const adminUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const dbName = `chat_schema_check_${randomBytes(4).toString('hex')}`;
  let handle: DatabaseHandle | undefined;
  const problems: string[] = [];
  try {
    if (embedded) {
      handle = await openDatabase({ dataDir: 'memory://' });
    } else {
      await admin(adminUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      handle = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolSize: 2 });
    }
    const { migrations } = await runMigrations(handle);
    const ds = handle.dataSource;
    const entities = ds.entityMetadatas.filter((m) => m.tableType === 'regular');

    const diff = await ds.driver.createSchemaBuilder().log();
    for (const q of diff.upQueries) {
      problems.push(
        `TypeORM would run: ${q.query}${q.parameters?.length ? ` -- ${JSON.stringify(q.parameters)}` : ''}`,
      );
    }
    problems.push(...(await coverage(ds, entities)));
    const compared = await compareDefinitions(ds, entities, problems);
    const files = loadFunctionFiles();
    const qr = ds.createQueryRunner();
    try {
      problems.push(...(await functionDrift(qr, files)));
    } finally {
      await qr.release();
    }

    const where = embedded ? 'embedded PGlite' : `PostgreSQL (${dbName})`;
    if (problems.length) {
      process.stderr.write(
        `Schema drift on ${where}: the entities, the migrations and the function files disagree.\n`,
      );
      for (const p of problems) process.stderr.write(`- ${p}\n`);
      process.exitCode = 1;
    } else {
      process.stdout.write(
        `Schema check on ${where}: ${migrations} migrations, ${entities.length} entities for as many tables, ` +
          `TypeORM's diff is empty; ${compared} definitions TypeORM does not compare agree; ` +
          `${files.length} functions have their file's text and no function lacks a file.\n`,
      );
    }
  } finally {
    await handle?.dataSource.destroy().catch(() => undefined);
    await handle?.closeEngine();
    if (!embedded) await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
  }
}

/** Every table has an entity; every `synchronize: false` index of an entity exists. */
async function coverage(ds: DataSource, entities: EntityMetadata[]): Promise<string[]> {
  const out: string[] = [];
  const tables: { name: string }[] = await ds.query(
    `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`,
  );
  const mapped = new Set(entities.map((m) => m.tableName));
  for (const t of tables) {
    if (!mapped.has(t.name) && !TYPEORM_TABLES.has(t.name)) out.push(`table ${t.name} has no entity`);
  }
  for (const m of entities) {
    for (const index of m.indices.filter((i) => !i.synchronize)) {
      const found: unknown[] = await ds.query(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass AND c.relname = $2`,
        [m.tableName, index.name],
      );
      if (!found.length) out.push(`${m.tableName}: index ${index.name} (synchronize: false) does not exist`);
    }
  }
  return out;
}

/**
 * Builds each definition the way TypeORM would, under a throwaway name, and compares PostgreSQL's text of
 * it with the original's. Returns how many definitions were compared.
 */
async function compareDefinitions(
  ds: DataSource,
  entities: EntityMetadata[],
  problems: string[],
): Promise<number> {
  const qr = ds.createQueryRunner();
  let n = 0;
  let seq = 0;
  const tmp = () => `schema_check_${++seq}`;
  const differ = (what: string, expected: string | undefined, actual: string | undefined) => {
    n++;
    if (expected !== actual)
      problems.push(
        `${what}:\n    migrations: ${expected ?? '(missing)'}\n    entities:   ${actual ?? '(missing)'}`,
      );
  };
  await qr.connect();
  await qr.startTransaction();
  try {
    for (const m of entities) {
      const table = m.tableName;
      for (const meta of m.indices.filter((i) => i.synchronize)) {
        const index = TableIndex.create(meta);
        const name = tmp();
        await qr.createIndex(table, new TableIndex({ ...index, name }));
        differ(
          `${table}: index ${meta.name}`,
          await indexDef(qr, meta.name, 'X'),
          await indexDef(qr, name, 'X'),
        );
      }
      for (const meta of m.uniques) {
        const name = tmp();
        await qr.createUniqueConstraint(table, new TableUnique({ ...TableUnique.create(meta), name }));
        differ(
          `${table}: unique ${meta.name}`,
          await constraintDef(qr, table, meta.name),
          await constraintDef(qr, table, name),
        );
      }
      for (const meta of m.checks) {
        const name = tmp();
        await qr.createCheckConstraint(table, new TableCheck({ ...TableCheck.create(meta), name }));
        differ(
          `${table}: check ${meta.name}`,
          await constraintDef(qr, table, meta.name),
          await constraintDef(qr, table, name),
        );
      }
      for (const meta of m.foreignKeys) {
        const name = tmp();
        await qr.createForeignKey(
          table,
          new TableForeignKey({ ...TableForeignKey.create(meta, ds.driver), name }),
        );
        differ(
          `${table}: foreign key ${meta.name}`,
          await constraintDef(qr, table, meta.name),
          await constraintDef(qr, table, name),
        );
      }
      const pk = await rows<{ def: string }>(
        qr,
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
        [table],
      );
      const columns = m.primaryColumns.map((c) => c.databaseName);
      const quoted = await rows<{ q: string }>(
        qr,
        `SELECT string_agg(quote_ident(c), ', ' ORDER BY o) AS q FROM unnest($1::text[]) WITH ORDINALITY AS x(c, o)`,
        [columns],
      );
      differ(`${table}: primary key`, pk[0]?.def, `PRIMARY KEY (${quoted[0]?.q})`);
      for (const column of m.columns.filter((c) => c.generatedType)) {
        const name = tmp();
        await qr.addColumn(
          table,
          new TableColumn({
            name,
            type: ds.driver.normalizeType(column),
            isNullable: column.isNullable,
            generatedType: column.generatedType,
            asExpression: column.asExpression,
          }),
        );
        differ(
          `${table}: generated column ${column.databaseName}`,
          await generated(qr, table, column.databaseName),
          await generated(qr, table, name),
        );
      }
    }
  } finally {
    await qr.rollbackTransaction();
    await qr.release();
  }
  return n;
}

async function indexDef(qr: QueryRunner, name: string | undefined, as: string): Promise<string | undefined> {
  const found = await rows<{ def: string }>(
    qr,
    `SELECT pg_get_indexdef(c.oid) AS def FROM pg_class c WHERE c.relname = $1 AND c.relkind = 'i' AND c.relnamespace = current_schema()::regnamespace`,
    [name],
  );
  return found[0]?.def.replace(/^(CREATE (?:UNIQUE )?INDEX )\S+/, `$1${as}`);
}

async function constraintDef(
  qr: QueryRunner,
  table: string,
  name: string | undefined,
): Promise<string | undefined> {
  const found = await rows<{ def: string }>(
    qr,
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2`,
    [table, name],
  );
  return found[0]?.def;
}

async function generated(qr: QueryRunner, table: string, column: string): Promise<string | undefined> {
  const found = await rows<{ def: string | null }>(
    qr,
    `SELECT pg_get_expr(d.adbin, d.adrelid) AS def FROM pg_attrdef d
       JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
      WHERE d.adrelid = $1::regclass AND a.attname = $2 AND a.attgenerated = 's'`,
    [table, column],
  );
  return found[0]?.def ?? undefined;
}

/** `QueryRunner.query` answers `any`; the rows' shape is the caller's statement's. */
async function rows<T>(qr: QueryRunner, sql: string, params: unknown[]): Promise<T[]> {
  return (await qr.query(sql, params)) as T[];
}

async function admin<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `check-schema-drift failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
});
