import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import type { StoredEvent } from './event-types';
import { DATABASE_HANDLE } from '../infra/database/database.module';
import type { DatabaseHandle } from '../infra/database/data-source.factory';

/** A position in the log's global order: the writing transaction's id, then the row's position. */
export interface LogCursor {
  txId: string;
  position: number;
}

export const LOG_START: LogCursor = { txId: '0', position: 0 };

/**
 * The settled bound: every transaction with an id below it has finished. On PostgreSQL it is the
 * oldest transaction id still running *in this database* (from pg_stat_activity, widened to 64 bits
 * with the epoch of the snapshot's xmax; running ids lie within 2^31 of it, and one that started after
 * the snapshot is above it, hence LEAST), so a long transaction in another database of the cluster does not hold
 * readers back; with no writer running it is the next id to be assigned. PGlite runs one transaction
 * at a time, so there its snapshot's xmin is exact.
 *
 * It must be read in a statement *before* the one that reads events: then a transaction below the
 * bound had finished before the reading statement's snapshot was taken, and is visible to it.
 */
const POSTGRES_BOUND = `
  WITH s AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::numeric AS xmax),
       e AS (SELECT floor(s.xmax / 4294967296) * 4294967296 AS base, s.xmax FROM s),
       x AS (SELECT e.base + a.backend_xid::text::numeric AS full_id, e.xmax
               FROM pg_stat_activity a, e
              WHERE a.datname = current_database() AND a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()),
       r AS (SELECT min(CASE WHEN full_id > xmax + 2147483648 THEN full_id - 4294967296
                             WHEN full_id < xmax - 2147483648 THEN full_id + 4294967296
                             ELSE full_id END) AS m FROM x)
  SELECT LEAST(COALESCE(r.m, e.xmax), e.xmax)::text AS bound FROM r, e`;
const EMBEDDED_BOUND = `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS bound`;

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
  constructor(
    private readonly db: DataSource,
    @Inject(DATABASE_HANDLE) private readonly handle: DatabaseHandle,
  ) {}

  /** Read it in its own statement, before reading events (see POSTGRES_BOUND). */
  async bound(m: EntityManager = this.db.manager): Promise<string> {
    const rows: { bound: string }[] = await m.query(this.handle.embedded ? EMBEDDED_BOUND : POSTGRES_BOUND);
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
