import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import type { StoredEvent } from './event-types';

/** A position in the log's global order: the writing transaction's id, then the row's position. */
export interface LogCursor {
  txId: string;
  position: number;
}

export const LOG_START: LogCursor = { txId: '0', position: 0 };

/**
 * The settled bound: every transaction of this database with an id below it has finished, so a row
 * below it that is not visible now never will be. It is the oldest id in the snapshot's in-progress
 * list that belongs to a session (or prepared transaction) of this database, else the snapshot's xmax.
 * A long transaction in another database of the cluster (which cluster-wide pg_snapshot_xmin would
 * wait for) cannot hold it back; ids at or above xmax are not in the list, so transactions that start
 * during the pg_stat_activity read cannot push it up. On PGlite (one connection) the list is empty.
 *
 * Read it in a statement *before* the one that reads events: a transaction that ends in between is
 * then visible to the reading statement.
 */
export const SETTLED_BOUND = `COALESCE(
  (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE xid(x) IN (SELECT backend_xid FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
                     UNION ALL SELECT transaction FROM pg_prepared_xacts WHERE database = current_database())),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * The settled bound for a statement that also reads the events (the log followers' one statement per
 * pass, LogTail). SETTLED_BOUND must be read a statement earlier: it keeps only the in-progress ids it
 * can match to a session of this database, and a transaction of this database that ends between the
 * statement's snapshot and its pg_stat_activity read would be left out while its rows are still
 * invisible to that snapshot. This one works the other way round: it leaves out only the ids it can
 * match to a session (or prepared transaction) of *another* database, so every in-progress id of the
 * snapshot that is not positively someone else's holds it back. A transaction of this database that
 * ends meanwhile still counts as running, which only delays its rows to the next read. It is never
 * above SETTLED_BOUND read at the same moment, and a long transaction in another database still
 * cannot hold it back. Raw functions instead of the views: cheaper to plan, same rows.
 */
export const SETTLED_BOUND_IN_STATEMENT = `COALESCE(
  (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE xid(x) NOT IN (
      SELECT a.backend_xid FROM pg_stat_get_activity(NULL) AS a
       WHERE a.backend_xid IS NOT NULL AND a.datid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
      UNION ALL
      SELECT p.transaction FROM pg_prepared_xact() AS p
       WHERE p.dbid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/** SQL condition: the row belongs to a finished transaction; `$n` is the bound read beforehand. */
export const settled = (param: string) => `e.tx_id < ${param}::xid8`;

export const EVENT_COLUMNS = `e.id, e.position, e.tx_id::text AS tx_id, e.workspace_id, e.channel_id, e.seq, e.type, e.payload, e.audience, e.created_at`;

export function encodeLogCursor(c: LogCursor): string {
  return `${c.txId}.${c.position}`;
}

export function decodeLogCursor(s: string, field = 'cursor'): LogCursor {
  const m = /^(\d{1,20})\.(\d{1,20})$/.exec(s);
  if (!m) throw AppError.validation(field, 'is not a valid cursor');
  return { txId: m[1]!, position: Number(m[2]) };
}

/**
 * Reads the event log in its global order (tx_id, position). A reader never sees a row of a
 * transaction still in flight, nor any row after it, so paging with the last cursor never skips an
 * event that commits late.
 */
@Injectable()
export class EventLogReader {
  constructor(private readonly db: DataSource) {}

  /** Read it in its own statement, before reading events (see SETTLED_BOUND). */
  async bound(m: EntityManager = this.db.manager): Promise<string> {
    const rows: { bound: string }[] = await m.query(`SELECT ${SETTLED_BOUND}::text AS bound`);
    return rows[0]!.bound;
  }

  async after(cursor: LogCursor, limit: number, m: EntityManager = this.db.manager): Promise<StoredEvent[]> {
    const bound = await this.bound(m);
    return m.query(
      `SELECT ${EVENT_COLUMNS} FROM events e
        WHERE (e.tx_id, e.position) > ($1::xid8, $2::bigint) AND ${settled('$4')}
        ORDER BY e.tx_id, e.position LIMIT $3`,
      [cursor.txId, cursor.position, limit, bound],
    );
  }

  /** The cursor after the last settled event: where a new reader starts. */
  /** Whether the first event after `c` was written more than `seconds` ago (a backlog no one followed). */
  async staleAfter(c: LogCursor, seconds: number): Promise<boolean> {
    const [first] = await this.db.query<{ stale: boolean }[]>(
      `SELECT e.created_at < now() - make_interval(secs => $3) AS stale FROM events e
        WHERE (e.tx_id, e.position) > ($1::xid8, $2::bigint) ORDER BY e.tx_id, e.position LIMIT 1`,
      [c.txId, c.position, seconds],
    );
    return first?.stale === true;
  }

  async head(m: EntityManager = this.db.manager): Promise<LogCursor> {
    const bound = await this.bound(m);
    const rows: { tx_id: string; position: number }[] = await m.query(
      `SELECT e.tx_id::text AS tx_id, e.position FROM events e WHERE ${settled('$1')} ORDER BY e.tx_id DESC, e.position DESC LIMIT 1`,
      [bound],
    );
    const r = rows[0];
    return r ? { txId: r.tx_id, position: r.position } : LOG_START;
  }
}
