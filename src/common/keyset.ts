/**
 * What `exactTime()` (infra/database/sql.ts) renders: UTC with microseconds. Cursor parts are checked
 * against it before they reach SQL as `$n::timestamptz`.
 */
export const EXACT_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
