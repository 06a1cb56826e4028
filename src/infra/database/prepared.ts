import { createHash } from 'crypto';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import type { EntityManager } from 'typeorm';
import { rows } from './sql';

/** The pg client of a TypeORM postgres query runner (set once it is connected). */
interface PgQueryRunner {
  databaseConnection?: PoolClient;
  isReleased?: boolean;
}

/** The pg pool behind TypeORM's postgres driver. */
interface PgDriver {
  master?: Pool;
}

const names = new Map<string, string>();

/** A stable statement name per SQL text (pg refuses one name for two texts). */
function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `q_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Runs a statement as a named prepared statement: PostgreSQL parses and plans it once per connection
 * instead of on every call (a third of the backend's CPU on the hot paths, measured). Inside a
 * transaction it goes through that transaction's connection; outside, through the pool, like
 * `EntityManager.query`. Falls back to `m.query` (through `rows`) when the driver is not pg's.
 */
export async function prepared<T>(m: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  const config: QueryConfig = { name: nameOf(text), text, values };
  const runner = m.queryRunner as PgQueryRunner | undefined;
  if (runner) {
    if (!runner.databaseConnection && !runner.isReleased)
      await (m.queryRunner as unknown as { connect(): Promise<unknown> }).connect();
    const client = runner.databaseConnection;
    if (client) return (await client.query(config)).rows as T[];
  }
  const pool = (m.connection.driver as unknown as PgDriver).master;
  if (pool && typeof pool.query === 'function') return (await pool.query(config)).rows as T[];
  return rows<T>(m, text, values);
}
