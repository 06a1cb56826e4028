import { mkdirSync, readFileSync } from 'fs';
import { join, resolve } from 'path';
import { types } from 'pg';
import { DataSource, DataSourceOptions, QueryRunner } from 'typeorm';
import { MIGRATIONS } from '../../database/migrations';
import { acceptSchemaColumnTypes } from './column-types';
import { ENTITIES } from '../../database/entities';
import { lockDataDir } from './data-dir-lock';
import { applySchemaFunctions, loadFunctionFiles, SchemaFunctionFile } from '../../database/schema-functions';

// COUNT(*) and bigint sequence numbers come back as strings by default; every bigint here is
// far below 2^53 (per-channel seq, counters), so numbers are the honest type.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export interface DatabaseHandle {
  dataSource: DataSource;
  /** Closes the embedded engine after the DataSource (no-op on PostgreSQL). */
  closeEngine: () => Promise<void>;
  embedded: boolean;
  /** Embedded only: the whole data directory as a tarball (PGlite's dumpDataDir), to seed `memory://<file>`. */
  dump?: () => Promise<Blob>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /**
   * Embedded data directory, or 'memory://' for an empty in-memory PGlite, or 'memory://<file>' for an
   * in-memory PGlite that starts from a dump of a data directory (the tests start from a migrated one).
   */
  dataDir: string;
  poolSize?: number;
  /** How long a query may wait for a connection of the pool (PostgreSQL only). */
  poolWaitMs?: number;
  logging?: boolean;
  /** What opens an embedded data directory (`server`, `cli`), named to a second process it turns away. */
  holder?: string;
}

const common = (): Pick<DataSourceOptions, 'entities' | 'migrations' | 'synchronize' | 'migrationsRun'> => ({
  entities: ENTITIES,
  migrations: MIGRATIONS,
  synchronize: false,
  migrationsRun: false,
});

export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  if (opts.databaseUrl) {
    const dataSource = new DataSource({
      type: 'postgres',
      url: opts.databaseUrl,
      ...common(),
      logging: opts.logging ? ['query', 'error'] : false,
      extra: {
        max: opts.poolSize ?? 20,
        idleTimeoutMillis: 30_000,
        connectionTimeoutMillis: opts.poolWaitMs ?? 10_000,
        application_name: 'chat-service',
      },
    });
    acceptSchemaColumnTypes(dataSource);
    await dataSource.initialize();
    return { dataSource, closeEngine: async () => {}, embedded: false };
  }

  // Embedded: PGlite through its own node-postgres adapter, one connection for the whole process.
  // PGlite runs one transaction at a time: every query inside a transaction must go through that
  // transaction's manager, or it waits for the single connection forever.
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const memory = opts.dataDir.startsWith('memory://');
  // PGlite's files belong to one process (a second one corrupts them or aborts): take the directory first
  const lock = memory ? undefined : await lockDataDir(opts.dataDir, opts.holder ?? 'server');
  const dir = memory ? opts.dataDir : resolve(join(opts.dataDir, 'pg'));
  if (!memory) mkdirSync(dir, { recursive: true });
  const seed = memory ? opts.dataDir.slice('memory://'.length) : '';
  const loadDataDir = seed ? new Blob([readFileSync(seed)]) : undefined;
  const pglite = new PGlite(memory ? 'memory://' : dir, { extensions: { pg_trgm }, loadDataDir });
  const closeEngine = async () => {
    if (!pglite.closed) await pglite.close();
    lock?.release();
  };
  try {
    await pglite.waitReady;
  } catch (e) {
    lock?.release();
    throw e;
  }
  const pgConfig = createPgConfig(pglite);
  const dataSource = new DataSource({
    type: 'postgres',
    host: pgConfig.host,
    port: pgConfig.port,
    username: pgConfig.user,
    password: pgConfig.password,
    database: pgConfig.database,
    ...common(),
    logging: opts.logging ? ['query', 'error'] : false,
    // the pool never drops its one client: the adapter's connection is shared state
    extra: { connection: pgConfig.connection, max: 1, idleTimeoutMillis: 0 },
  });
  acceptSchemaColumnTypes(dataSource);
  try {
    await dataSource.initialize();
  } catch (e) {
    await closeEngine().catch(() => lock?.release());
    throw e;
  }
  return { dataSource, embedded: true, closeEngine, dump: () => pglite.dumpDataDir('none') };
}

export interface MigrationResult {
  /** Migrations run. */
  migrations: number;
  /** Functions (src/database/functions) created or replaced because their file is new or changed. */
  functions: string[];
  /**
   * Migrations the database records that this build does not have: a newer build migrated it (a
   * rolling upgrade, with this build's pods still starting). Its SQL functions are then left as the newer
   * build wrote them: applying this build's older texts would undo them under the newer pods.
   */
  newer: string[];
}

/**
 * Runs pending migrations, then applies the SQL function files that changed (schema-functions.ts); on
 * PostgreSQL both under one advisory lock, so instances starting together take turns and the second
 * finds everything applied. `functionsDir` (tests) reads the files from elsewhere.
 */
export async function runMigrations(
  handle: DatabaseHandle,
  opts: { functionsDir?: string } = {},
): Promise<MigrationResult> {
  const { dataSource } = handle;
  // read before anything runs: a build without its .sql files fails here, not half-migrated
  const files = loadFunctionFiles(opts.functionsDir);
  if (handle.embedded) {
    // one process holds the data directory (lockDataDir): nothing to take turns with. PGlite has one
    // connection, so the runner for the functions takes it only once the migrations gave it back
    const migrations = (await dataSource.runMigrations({ transaction: 'each' })).length;
    const runner = dataSource.createQueryRunner();
    try {
      return { migrations, ...(await applyUnlessNewer(dataSource, runner, files)) };
    } finally {
      await runner.release();
    }
  }
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(7243001)');
    const migrations = (await dataSource.runMigrations({ transaction: 'each' })).length;
    return { migrations, ...(await applyUnlessNewer(dataSource, lock, files)) };
  } finally {
    await lock.query('SELECT pg_advisory_unlock(7243001)').catch(() => undefined);
    await lock.release();
  }
}

/** The function files' step, unless the database was migrated by a newer build (MigrationResult.newer). */
async function applyUnlessNewer(
  dataSource: DataSource,
  runner: QueryRunner,
  files: SchemaFunctionFile[],
): Promise<{ functions: string[]; newer: string[] }> {
  const known = new Set(dataSource.migrations.map((m) => m.name ?? m.constructor.name));
  const recorded = (await runner.query(
    `SELECT name FROM ${dataSource.driver.escape(dataSource.options.migrationsTableName ?? 'migrations')}`,
  )) as { name: string }[];
  const newer = recorded.map((r) => r.name).filter((n) => !known.has(n));
  return { functions: newer.length ? [] : await applySchemaFunctions(runner, files), newer };
}

/**
 * The event log's order is (tx_id, position), tx_id being the writing transaction's id: it only works
 * while the cluster's transaction counter is ahead of every tx_id in the log. A physical backup (a base
 * backup and its WAL: point-in-time recovery, docs/BACKUP.md) keeps the counter; a logical dump
 * (pg_dump) restored into another cluster does not, and there new events would sort before the old ones
 * and never reach realtime, webhooks or sync. Such a database is refused at start-up, with the reason.
 */
export async function checkTransactionCounter(handle: DatabaseHandle): Promise<void> {
  const [row] = await handle.dataSource.query<{ newest: string; next: string }[]>(
    `SELECT e.tx_id::text AS newest, pg_snapshot_xmax(pg_current_snapshot())::text AS next
       FROM events e ORDER BY e.tx_id DESC LIMIT 1`,
  );
  if (row && BigInt(row.newest) >= BigInt(row.next))
    throw new Error(
      `The event log's newest transaction id (${row.newest}) is ahead of this PostgreSQL cluster's ` +
        `transaction counter (${row.next}): the database was restored from a logical dump (pg_dump), which ` +
        'does not keep transaction ids, and new events would never be delivered. Restore it from a physical ' +
        'backup (base backup and WAL, point-in-time recovery: docs/BACKUP.md) instead.',
    );
}
