import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { JobData, JobName } from '../infra/queue/job-map';
import { QueueService } from '../infra/queue/queue.module';
import { LeaderLease, Leadership } from '../infra/database/leadership';
import { Follower, Metrics } from '../ops/metrics';
import { LogTail, LogTailPart, PartResult, PassInfo, PassStatement } from './log-tail';
import { SavedCursor } from './saved-cursor';

/** The jobs a relay can make: those whose payload is one event's id. */
type EventJob = { [N in JobName]: JobData<N> extends { eventId: string } ? N : never }[JobName];

/** What one relay follows and makes. */
export interface EventJobRelaySpec {
  /** Its row in event_relay_cursors (a migration inserts it), the prefix of its CTEs and its metrics label. */
  name: Follower;
  /** The job made of each event. */
  job: EventJob;
  /** The log types it follows (a constant of the statement's text). */
  types: readonly string[];
  /** A further condition on the event `e` (SQL, a constant of the statement's text). */
  where?: string;
  /** Events older than this are passed over (a push about a message from before an outage is noise). */
  maxAgeSeconds?: number;
}

const BATCH = 500;
/** The cursor is saved with the next pass after jobs were enqueued, and otherwise at least this often when it moved. */
const SAVE_EVERY_MS = 10_000;

interface EventRef {
  id: string;
  tx: string;
  pos: number;
  stale: boolean;
  created_at: string;
}

/**
 * Turns committed events of some types into jobs (one per event, its id the event id), as its part of
 * the shared log pass (LogTail: (tx_id, position) order below the settled bound, so an event a slow
 * transaction commits late is never skipped). One instance relays at a time (Leadership); its position
 * is a SavedCursor, written with the next pass after jobs were enqueued (and otherwise at least every
 * SAVE_EVERY_MS when it moved): at least once, and a repeat enqueue is absorbed by the queue (same job
 * id). A new leader starts from the saved position, so only a leader that died between enqueueing and
 * its next pass leaves events to be enqueued again. The push and link-preview relays are two of these.
 */
export class EventJobRelay implements LogTailPart {
  readonly name: string;
  private readonly logger: Logger;
  private readonly lease: LeaderLease;
  private readonly cursor: SavedCursor;
  private started = false;
  private loading: Promise<void> | null = null;
  /** Jobs were enqueued since the cursor was last saved. */
  private pendingJobs = false;

  constructor(
    db: DataSource,
    private readonly queue: QueueService,
    private readonly tail: LogTail,
    leadership: Leadership,
    private readonly metrics: Metrics,
    private readonly spec: EventJobRelaySpec,
  ) {
    this.name = spec.name;
    this.logger = new Logger(`EventJobRelay(${spec.name})`);
    this.cursor = new SavedCursor(db, spec.name);
    this.lease = leadership.lease(`${spec.name}-relay`, (leading) => this.leading(leading));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.tail.register(this);
    this.lease.start();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.tail.unregister(this);
    await this.cursor.flush().catch((e: unknown) => this.logger.warn(`saving the cursor: ${String(e)}`));
    await this.lease.stop();
  }

  private leading(leading: boolean): void {
    this.cursor.reset();
    this.metrics.followerAt(this.spec.name); // the leader, here or elsewhere, reports the lag
    if (leading && this.started) {
      this.loading = this.cursor
        .load()
        .then(() => (this.lease.isLeader ? this.tail.nudge() : this.cursor.reset()))
        .catch((e: unknown) => this.logger.warn(`loading the cursor: ${String(e)}`))
        .finally(() => (this.loading = null));
    }
  }

  build(q: PassStatement): string | null {
    const at = this.cursor.at;
    if (!this.started || !this.lease.isLeader || !at || this.loading) return null;
    const { name, types, where, maxAgeSeconds } = this.spec;
    this.cursor.saveInto(q, this.pendingJobs || this.cursor.sinceSave > SAVE_EVERY_MS);
    const stale = maxAgeSeconds ? `e.created_at < now() - make_interval(secs => ${maxAgeSeconds})` : 'false';
    q.cte(
      `${name}_ev`,
      `SELECT e.id, e.tx_id::text AS tx, e.position AS pos, e.created_at, ${stale} AS stale
         FROM events e
        WHERE (e.tx_id, e.position) > (${q.param(at.txId, 'xid8')}, ${q.param(at.position, 'bigint')})
          AND e.tx_id < ${q.bound} AND e.type IN (${types.map((t) => `'${t}'`).join(', ')})${where ? ` AND (${where})` : ''}
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    return `(SELECT COALESCE(json_agg(json_build_object('id', id, 'tx', tx, 'pos', pos, 'stale', stale, 'created_at', created_at) ORDER BY tx::xid8, pos), '[]') FROM ${name}_ev)`;
  }

  async apply(output: unknown, pass: PassInfo): Promise<PartResult> {
    if (this.cursor.passed()) this.pendingJobs = false;
    const events = output as EventRef[];
    const first = events[0];
    this.metrics.followerAt(
      this.spec.name,
      first && { position: first.pos, created_at: first.created_at },
      pass.head,
    );
    const fresh = events.filter((e) => !e.stale);
    if (fresh.length) {
      await this.queue.addBulk(
        this.spec.job,
        fresh.map((e) => ({ data: { eventId: e.id }, opts: { jobId: e.id } })),
      );
      this.pendingJobs = true;
    }
    const last = events[events.length - 1];
    // a short batch read every event it follows below the bound: the cursor can jump to the bound itself,
    // so the next pass does not rescan the other events in between
    this.cursor.advance(
      events.length < BATCH || !last
        ? { txId: pass.bound, position: 0 }
        : { txId: last.tx, position: Number(last.pos) },
    );
    return { events: events.length, more: events.length >= BATCH };
  }
}
