import { Client } from 'pg';
import { createHash, randomBytes } from 'crypto';
import { openDatabase, runMigrations } from '../../src/infra/database/data-source.factory';
import { MIGRATIONS } from '../../src/database/migrations';
import { loadFunctionFiles } from '../../src/database/schema-functions';

export const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function isIntegration(): boolean {
  return process.env.TEST_MODE === 'integration';
}

/**
 * The template's name changes with the migration list and the function files, so a stale template is
 * never reused (a clone would re-apply a changed file at start-up anyway, but every clone would).
 */
export function templateName(): string {
  const last = MIGRATIONS[MIGRATIONS.length - 1]!.name;
  const functions = createHash('sha256')
    .update(
      loadFunctionFiles()
        .map((f) => `${f.name}:${f.checksum}`)
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 8);
  return `chat_tpl_${MIGRATIONS.length}_${last.replace(/\D/g, '').slice(-8)}_${functions}`;
}

function urlFor(db: string): string {
  const u = new URL(ADMIN_DATABASE_URL);
  u.pathname = `/${db}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates (once) the migrated template database. */
export async function ensureTemplate(): Promise<void> {
  const name = templateName();
  const exists = await admin(
    async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
  if (exists) return;
  const tmp = `${name}_build_${randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${tmp}"`));
  const handle = await openDatabase({ databaseUrl: urlFor(tmp), dataDir: '', poolSize: 2 });
  await runMigrations(handle);
  await handle.dataSource.destroy();
  await admin(async (c) => {
    try {
      await c.query(`ALTER DATABASE "${tmp}" RENAME TO "${name}"`);
    } catch {
      await c.query(`DROP DATABASE IF EXISTS "${tmp}"`); // another worker won the race
    }
  });
}

/** A fresh database for one test file, cloned from the template. */
export async function cloneDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `chat_t_${runId()}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await ensureTemplate();
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName()}"`));
  return {
    url: urlFor(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** One id per test run (set by the global setup, inherited by the workers), so a run only drops its own databases. */
export function runId(): string {
  if (!process.env.CHAT_TEST_RUN) process.env.CHAT_TEST_RUN = randomBytes(3).toString('hex');
  return process.env.CHAT_TEST_RUN;
}

export async function dropTestDatabases(): Promise<void> {
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`chat_t_${runId()}_%`],
    );
    for (const r of rows)
      await c.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`).catch(() => undefined);
  });
}
