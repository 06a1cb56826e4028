import { QueryFailedError, type EntityManager } from 'typeorm';
import { AppError } from '../../common/errors/app-error';

/**
 * Runs a statement and returns its rows. TypeORM's postgres driver answers UPDATE and DELETE with
 * `[rows, rowCount]` but SELECT and INSERT with `rows`; this hides the difference, so a
 * `... RETURNING` reads the same whatever the verb.
 */
export async function rows<T>(m: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await m.query(text, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/**
 * A timestamp column as exact text (microseconds) for keyset cursors. JavaScript dates keep only
 * milliseconds, and a cursor cut to milliseconds would skip or repeat rows within the same millisecond.
 */
export function exactTime(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** A timestamp column as the API shows times (RFC 3339 UTC with milliseconds, CONTRACT §1), or SQL null. */
export function isoTime(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * Runs a unit of work whose rows hang off a membership (a foreign key to `channel_members`): a
 * membership gone between the check and the write (the user left meanwhile) is 403 `NOT_A_MEMBER`, not
 * a 500.
 */
export function asMember<T>(work: () => Promise<T>): Promise<T> {
  return onForeignKeyGone(work, () => new AppError('NOT_A_MEMBER'));
}

/** Runs a unit of work whose rows reference others that may go meanwhile: a foreign key violation is `gone()`. */
export async function onForeignKeyGone<T>(work: () => Promise<T>, gone: () => AppError): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof QueryFailedError && (e.driverError as { code?: string } | undefined)?.code === '23503')
      throw gone();
    throw e;
  }
}
