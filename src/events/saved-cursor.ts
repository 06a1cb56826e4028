import { DataSource } from 'typeorm';
import type { LogCursor } from './event-log.reader';
import { FOLLOWER_TAG, PassStatement } from './log-tail';

/**
 * The position of a log follower whose output leaves the database (sockets, the job queue), so it
 * cannot move its cursor in the transaction that reads the events: kept in its row of
 * `event_relay_cursors`, at least once. The follower reads after `at`; once a batch is handed on it
 * `advance`s; the new position is written by a later pass's statement (`saveInto`, a CTE of the
 * pass) and by `flush` on stop. A new leader `load`s it and hands on again only what the one before it
 * handed on after its last save. Never moves backwards in the table (a late writer cannot undo a save).
 */
export class SavedCursor {
  /** Where the next pass reads from; null until loaded (and after `reset`). */
  at: LogCursor | null = null;
  private saved: LogCursor | null = null;
  private savedAt = 0;
  private saving: LogCursor | null = null;

  constructor(
    private readonly db: DataSource,
    /** The follower's row in event_relay_cursors (and the prefix of its CTE). */
    readonly name: string,
  ) {}

  reset(): void {
    this.at = this.saved = this.saving = null;
  }

  /** Reads the saved position and follows from it. */
  async load(): Promise<LogCursor | null> {
    const [row] = await this.db.query<{ tx_id: string; position: number }[]>(
      `${FOLLOWER_TAG} SELECT tx_id::text AS tx_id, position FROM event_relay_cursors WHERE name = $1`,
      [this.name],
    );
    if (!row) return null;
    this.at = this.saved = { txId: row.tx_id, position: Number(row.position) };
    this.savedAt = Date.now();
    return this.at;
  }

  /** Milliseconds since the position was last written. */
  get sinceSave(): number {
    return Date.now() - this.savedAt;
  }

  /** Adds the write of `at` to the pass when it moved since the last write and `due`. */
  saveInto(q: PassStatement, due: boolean): void {
    this.saving = null;
    if (!due || !this.at || !this.saved || !isAfter(this.at, this.saved)) return;
    this.saving = this.at;
    const tx = q.param(this.at.txId, 'xid8');
    const pos = q.param(this.at.position, 'bigint');
    q.cte(
      `${this.name}_save`,
      `UPDATE event_relay_cursors SET tx_id = ${tx}, position = ${pos}, updated_at = now()
        WHERE name = '${this.name}' AND (tx_id, position) < (${tx}, ${pos}) RETURNING 1`,
    );
  }

  /** The pass committed; true when it wrote the position (`saveInto` added the write). */
  passed(): boolean {
    if (!this.saving) return false;
    this.saved = this.saving;
    this.savedAt = Date.now();
    this.saving = null;
    return true;
  }

  /** Everything up to `next` was handed on. */
  advance(next: LogCursor): void {
    if (this.at && isAfter(next, this.at)) this.at = next;
  }

  /** Writes `at` now, if it moved (on stop). */
  async flush(): Promise<void> {
    const c = this.at;
    if (!c || (this.saved && !isAfter(c, this.saved))) return;
    await this.db.query(
      `${FOLLOWER_TAG} UPDATE event_relay_cursors SET tx_id = $2::xid8, position = $3, updated_at = now()
        WHERE name = $1 AND (tx_id, position) < ($2::xid8, $3::bigint)`,
      [this.name, c.txId, c.position],
    );
    this.saved = c;
  }
}

export function isAfter(a: LogCursor, b: LogCursor): boolean {
  const ta = BigInt(a.txId);
  const tb = BigInt(b.txId);
  return ta > tb || (ta === tb && a.position > b.position);
}
