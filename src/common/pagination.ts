import { AppError } from './errors/app-error';
import { isUuid } from './ids';
import { isExactTime } from './keyset';

/** Opaque keyset cursors: base64url JSON of the sort key of the last item of a page. */
export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeCursor(
  cursor: string,
  shape: ('string' | 'number')[],
  field = 'before',
): (string | number)[] {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parts) &&
      parts.length === shape.length &&
      parts.every((p, i) => typeof p === shape[i])
    ) {
      return parts as (string | number)[];
    }
  } catch {
    /* fall through */
  }
  throw AppError.validation(field, 'is not a valid cursor');
}

/** The cursor of a list in id order (UUIDv7 ids): the id of the last row of the previous page. */
export function decodeIdCursor(cursor: string, field = 'before'): string {
  const id = String(decodeCursor(cursor, ['string'], field)[0]);
  if (!isUuid(id)) throw AppError.validation(field, 'is not a valid cursor');
  return id;
}

/**
 * The cursor of a list in (time, id) order: an exact time as `exactTime()` renders it and a row id,
 * both checked before they reach SQL as `$n::timestamptz` and `$n::uuid`.
 */
export function decodeTimeIdCursor(cursor: string, field = 'before'): { key: string; id: string } {
  const { key, ids } = decodeTimeIdsCursor(cursor, 1, field);
  return { key, id: ids[0]! };
}

/** As decodeTimeIdCursor, for a sort key of a time and `count` ids (a poll's votes: user, option). */
export function decodeTimeIdsCursor(
  cursor: string,
  count: number,
  field = 'before',
): { key: string; ids: string[] } {
  const [key, ...ids] = decodeCursor(cursor, Array<'string'>(count + 1).fill('string'), field) as string[];
  if (!isExactTime(key!) || !ids.every(isUuid)) throw AppError.validation(field, 'is not a valid cursor');
  return { key: key!, ids };
}

export interface Page<T> {
  items: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Given limit+1 rows, cuts the page and builds the cursor from the last kept row. */
export function pageOf<T>(rows: T[], limit: number, keyOf: (row: T) => (string | number)[]): Page<T> {
  const has_more = rows.length > limit;
  const items = has_more ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return { items, has_more, next_cursor: has_more && last ? encodeCursor(keyOf(last)) : null };
}
