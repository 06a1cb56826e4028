import { parseRfc3339 } from './rfc3339';

/** What `exactTime()` (infra/database/sql.ts) renders: UTC with microseconds. */
export const EXACT_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * A cursor's time part as `exactTime()` renders it and a real instant (month 13 or hour 99 have the
 * shape but PostgreSQL's `$n::timestamptz` would refuse them with an error, not a 400): checked before
 * it reaches SQL.
 */
export function isExactTime(value: string): boolean {
  return EXACT_TIME_PATTERN.test(value) && parseRfc3339(value) !== null;
}
