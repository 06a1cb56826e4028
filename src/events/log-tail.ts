import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'crypto';
import { DataSource, type QueryRunner } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import { detached } from '../ops/tracing/tracing';
import type { AppConfig } from '../config/config.schema';
import { SETTLED_BOUND_IN_STATEMENT } from './event-log.reader';
import { EventNotifier } from './event-notifier';

/** Every statement the log followers send starts with this tag (pg_stat_statements, bench/followers.ts). */
export const FOLLOWER_TAG = '/* log-follower */';

/** After a commit is announced, wait this long so that commits close together share a pass. */
const NUDGE_DELAY_MS = 2;
/** Under a steady stream, a pass every TARGET_EVENTS events, but never closer than MIN_GAP_MS nor further than MAX_GAP_MS apart. */
const TARGET_EVENTS = 4;
const MIN_GAP_MS = 5;
const MAX_GAP_MS = 75;
/** Idle: one pass (an indexed probe per follower) this often, in case an announcement was lost. */
const POLL_MS = 1_000;
/** Committed events wait behind a transaction still running (which may announce nothing when it ends): look again soon, backing off to POLL_MS. */
const HELD_RETRY_MS = 10;

/** The statement of one pass, as the parts build it. */
export class PassStatement {
  readonly params: unknown[] = [];
  readonly ctes: string[] = [];
  /** This statement's settled bound (xid8): rows of transactions below it are final and visible. */
  readonly bound = '(SELECT bound FROM log_bound)';

  /**
   * A parameter for `value` (a cursor, say), as a scalar subquery: the planner does not see the value,
   * so every plan of the statement is the same and, after its first executions, the prepared
   * statement's generic plan is kept (index range scans whatever the cursor) instead of planning each
   * pass. Constants of the code go into the text instead.
   */
  param(value: unknown, cast: string): string {
    this.params.push(value);
    return `(SELECT $${this.params.length}::${cast})`;
  }

  /** A CTE of the statement (names must be unique: prefix them with the part's name). */
  cte(name: string, sql: string): void {
    this.ctes.push(`${name} AS (${sql})`);
  }
}

export interface PartResult {
  /** Events this part read (they set the pace of passes under load). */
  events: number;
  /** The part read a full batch: pass again soon. */
  more: boolean;
}

/**
 * A reader of the log that takes part in the shared pass (webhook relay, push relay, realtime
 * publisher). Its `build` adds what it reads or writes to the pass's one statement and returns the
 * SQL expression of its output (json), or null when it has nothing to do this pass; `apply` gets that
 * output after the statement committed. Parts must stay cheap when there is nothing new: an index
 * probe, no row lock, no write.
 */
export interface LogTailPart {
  readonly name: string;
  build(q: PassStatement): string | null;
  apply(output: unknown, pass: PassInfo): Promise<PartResult>;
}

/** What every part of a pass is told besides its own output. */
export interface PassInfo {
  /** The statement's settled bound (xid8, as text). */
  bound: string;
  /** The newest position in the log (0 when it is empty), for the followers' lag. */
  head: number;
  /** The database's clock when the statement ran (epoch ms): an event's age is this less its created_at. */
  dbNowMs: number;
  /** When this process sent the statement (epoch ms): a follower's span starts there. */
  startedMs: number;
}

/**
 * The statement of one pass over `parts`: the settled bound, the log's newest position (a backward
 * probe of its primary key, for the followers' lag), whether committed events are held behind a
 * running transaction (a range probe of the (tx_id, position) index from the bound on), and each
 * active part's output (json) in a column of its own. Every read of `events` in it must be such an
 * index probe, bounded by a range on (tx_id, position) or taken from one end of an index with LIMIT 1,
 * so that a pass costs O(new events) however many old ones the table keeps
 * (test/events/follower-plans.int-spec.ts checks the plans). Write a probe for "is there a row after X"
 * as an ordered LIMIT 1 scalar subquery, not EXISTS: the planner drops an EXISTS's ORDER BY and plans
 * it for an early first match, which on a large log can be a walk of another index or of the table.
 */
export function composePass(parts: LogTailPart[]): {
  text: string;
  params: unknown[];
  outputs: { part: LogTailPart; column: string }[];
} {
  const q = new PassStatement();
  const outputs: { part: LogTailPart; column: string }[] = [];
  const select: string[] = [];
  for (const part of parts) {
    const expr = part.build(q);
    if (expr === null) continue;
    const column = `p${outputs.length}`;
    outputs.push({ part, column });
    select.push(`${expr} AS ${column}`);
  }
  const text = `${FOLLOWER_TAG}
WITH log_bound AS MATERIALIZED (SELECT ${SETTLED_BOUND_IN_STATEMENT} AS bound)${q.ctes.length ? `,\n${q.ctes.join(',\n')}` : ''}
SELECT log_bound.bound::text AS bound, (SELECT max(e.position) FROM events e) AS head,
       extract(epoch FROM clock_timestamp()) * 1000 AS db_now_ms,
       (SELECT e.tx_id FROM events e WHERE e.tx_id >= log_bound.bound ORDER BY e.tx_id, e.position LIMIT 1) IS NOT NULL AS held${select.map((s) => `,\n       ${s}`).join('')}
  FROM log_bound`;
  return { text, params: q.params, outputs };
}

interface PassRow {
  bound: string;
  head: number | string | null;
  db_now_ms: number | string;
  held: boolean;
  [part: string]: unknown;
}

/**
 * Follows the event log for every reader in this process with one statement per pass: the settled
 * bound (SETTLED_BOUND_IN_STATEMENT), whether committed events wait behind a running transaction
 * (a probe of the (tx_id, position) index from the bound on), and each part's CTEs (each an index range scan
 * after its cursor, below the bound, LIMIT its batch). A pass costs O(new events), whatever the size
 * of the table.
 *
 * When: a commit with events (on any instance, through EventNotifier) asks for a pass in
 * NUDGE_DELAY_MS; under a steady stream passes are paced so that one covers about TARGET_EVENTS events
 * (within MIN_GAP_MS..MAX_GAP_MS), so the statements per event stay well below one while a lone
 * event still goes out at once; a full batch asks for the next pass at once; idle, one pass per
 * POLL_MS (HELD_RETRY_MS, backing off, while events are held behind a running transaction).
 *
 * On PostgreSQL the statement is a named prepared statement that keeps its generic plan (not planned
 * again each pass), on a connection kept for the passes. When it fails, the next pass runs each part in a statement of its own, so one part's
 * trouble does not stall the others, then they share again.
 */
@Injectable()
export class LogTail implements BeforeApplicationShutdown {
  private readonly logger = new Logger('LogTail');
  private readonly parts = new Set<LogTailPart>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unsubscribe?: () => void;
  private isolate = false;
  private lastStart = 0;
  private lastEvents = 0;
  /** Events per second, smoothed over the last passes. */
  private rate = 0;
  private heldDelay = HELD_RETRY_MS;
  private failed = false;
  private held = false;
  private more = false;
  /**
   * The pooled connection passes run on, kept from one pass to the next (passes run one at a time):
   * PostgreSQL caches a prepared statement's plan per connection, after its first five executions
   * there, so a pass that went to any of the pool's connections was planned on most calls (4-8 ms each).
   */
  private runner: QueryRunner | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly notifier: EventNotifier,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Adds a part; the tail runs while it has parts. */
  register(part: LogTailPart): void {
    this.parts.add(part);
    if (this.stopped) {
      this.stopped = false;
      this.unsubscribe = this.notifier.onCommitted(() => this.nudge());
    }
    this.schedule(0);
  }

  /** Removes a part after the pass in flight; the last one out stops the tail. */
  async unregister(part: LogTailPart): Promise<void> {
    await this.running;
    this.parts.delete(part);
    if (!this.parts.size) await this.stop();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    const runner = this.runner;
    this.runner = null;
    await runner?.release();
  }

  /** Asks for a pass soon (coalesced with one in flight or already due; paced under a steady stream). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(this.paced(NUDGE_DELAY_MS));
  }

  /** Runs a pass now (after the one in flight) and waits for it. For tests and benchmarks. */
  async passNow(): Promise<void> {
    while (this.running) await this.running;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.run();
    const running = this.running as Promise<void> | null;
    await running;
  }

  /** Milliseconds from now until the next pass may start: `atLeast`, and after a pass that read events, the pace of the stream. */
  private paced(atLeast: number): number {
    if (!this.lastEvents) return atLeast;
    const gap = Math.min(
      MAX_GAP_MS,
      Math.max(MIN_GAP_MS, this.rate > 0 ? (TARGET_EVENTS / this.rate) * 1000 : MAX_GAP_MS),
    );
    return Math.max(atLeast, this.lastStart + gap - Date.now());
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return; // an earlier wake-up is already set
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    // a pass is nobody's request: one that a commit asked for does not join that request's trace
    this.timer = setTimeout(() => {
      this.timer = null;
      detached(() => this.run());
    }, ms);
    this.timer.unref();
  }

  private run(): void {
    if (this.running || this.stopped || !this.parts.size) return;
    this.again = false;
    this.running = this.pass()
      .catch((err: unknown) => {
        this.failed = true;
        this.logger.warn(`pass failed: ${String(err)}`);
      })
      .finally(() => {
        this.running = null;
        this.afterPass();
      });
  }

  private afterPass(): void {
    if (this.failed) {
      this.failed = false;
      // asked for again meanwhile (a commit, a link back): soon; else the idle pace
      this.schedule(this.again ? this.paced(NUDGE_DELAY_MS) : POLL_MS);
    } else if (this.more) {
      this.schedule(0); // a backlog: read on at once
    } else if (this.again) {
      this.schedule(this.paced(0));
    } else if (this.held) {
      this.schedule(this.heldDelay);
      this.heldDelay = Math.min(POLL_MS, this.heldDelay * 2);
    } else {
      this.schedule(POLL_MS);
    }
  }

  private async pass(): Promise<void> {
    const started = Date.now();
    const parts = [...this.parts];
    const groups = this.isolate ? parts.map((p) => [p]) : [parts];
    let events = 0;
    let more = false;
    let held = false;
    let ok = true;
    for (const group of groups) {
      try {
        const r = await this.passOf(group);
        events = Math.max(events, r.events);
        more ||= r.more;
        held ||= r.held;
      } catch (err) {
        ok = false;
        this.logger.warn(`pass of ${group.map((p) => p.name).join(', ')} failed: ${String(err)}`);
      }
    }
    // a failed shared statement: next time each part on its own; all fine on their own: share again
    if (!ok && !this.isolate) this.isolate = true;
    else if (ok && this.isolate) this.isolate = false;
    if (!ok) this.failed = true;
    const interval = this.lastStart ? Math.max(1, started - this.lastStart) : POLL_MS;
    this.rate = this.rate * 0.7 + ((events * 1000) / interval) * 0.3;
    this.lastStart = started;
    this.lastEvents = events;
    this.more = more;
    if (!held || events) this.heldDelay = HELD_RETRY_MS;
    this.held = held;
  }

  private async passOf(parts: LogTailPart[]): Promise<{ events: number; more: boolean; held: boolean }> {
    const { text, params, outputs } = composePass(parts);
    if (!outputs.length) return { events: 0, more: false, held: false }; // nobody reads this time: no statement
    const startedMs = Date.now();
    const row = (await this.execute(text, params))[0];
    if (!row) throw new Error('the pass statement returned no row');
    const results = await Promise.all(
      outputs.map(async ({ part, column }) => {
        try {
          return await part.apply(row[column], {
            bound: row.bound,
            head: Number(row.head ?? 0),
            dbNowMs: Number(row.db_now_ms),
            startedMs,
          });
        } catch (err) {
          this.logger.warn(`${part.name}: ${String(err)}`);
          this.failed = true;
          return { events: 0, more: false };
        }
      }),
    );
    return {
      events: results.reduce((m, r) => Math.max(m, r.events), 0),
      more: results.some((r) => r.more),
      held: row.held,
    };
  }

  /**
   * On PostgreSQL a named prepared statement (one per statement text, prepared once per connection);
   * with the cursors hidden from the planner (PassStatement.param) it keeps its generic plan after the
   * first executions, so a pass is not planned again each time.
   */
  private async execute(text: string, params: unknown[]): Promise<PassRow[]> {
    if (this.config.embedded) return this.db.query(text, params);
    const runner = (this.runner ??= this.db.createQueryRunner('master'));
    try {
      const client = (await runner.connect()) as {
        query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: PassRow[] }>;
      };
      const name = `lf_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      return (await client.query({ name, text, values: params })).rows;
    } catch (err) {
      // not kept after a failure (the connection may be gone): the next pass takes one from the pool
      if (this.runner === runner) this.runner = null;
      await runner.release().catch(() => undefined);
      throw err;
    }
  }
}
