import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LogTail, LogTailPart, PartResult, PassInfo, PassStatement } from '../events/log-tail';
import { QueueService } from '../infra/queue/queue.module';
import { LeaderLease, Leadership } from '../infra/database/leadership';
import { SavedCursor } from '../events/saved-cursor';
import { Metrics } from '../ops/metrics';

export const PUSH_JOB = 'push.message' as const;
/** The event types a push is made of: a new message (to the channel's members), a reminder (to its user). */
const PUSHED_TYPES = `('message.created', 'notification.reminder_due')`;
const RELAY = 'push';
const BATCH = 500;
/** A push about a message older than this is noise: such events are passed over (after an outage, say). */
export const PUSH_MAX_AGE_SECONDS = 15 * 60;
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
 * Turns committed `message.created` and `notification.reminder_due` events into push jobs, as its part of the shared log pass
 * (LogTail: (tx_id, position) order below the settled bound, so an event a slow transaction commits
 * late is never skipped). One instance relays at a time (Leadership); its position is a SavedCursor,
 * written with the next pass after jobs were enqueued (and otherwise at least every SAVE_EVERY_MS when
 * it moved): at least once, and the job id is the event id, so a repeat enqueue is absorbed by the
 * queue. A new leader starts from the saved position, so only a leader that died between enqueueing
 * and its next pass leaves events to be enqueued again.
 */
@Injectable()
export class PushRelay implements LogTailPart {
  readonly name = 'push';
  private readonly logger = new Logger('PushRelay');
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
  ) {
    this.cursor = new SavedCursor(db, RELAY);
    this.lease = leadership.lease('push-relay', (leading) => this.leading(leading));
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
    this.metrics.followerAt('push'); // the leader, here or elsewhere, reports the lag
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
    this.cursor.saveInto(q, this.pendingJobs || this.cursor.sinceSave > SAVE_EVERY_MS);
    q.cte(
      'push_ev',
      `SELECT e.id, e.tx_id::text AS tx, e.position AS pos, e.created_at, e.created_at < now() - make_interval(secs => ${PUSH_MAX_AGE_SECONDS}) AS stale
         FROM events e
        WHERE (e.tx_id, e.position) > (${q.param(at.txId, 'xid8')}, ${q.param(at.position, 'bigint')})
          AND e.tx_id < ${q.bound} AND e.type IN ${PUSHED_TYPES}
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    return `(SELECT COALESCE(json_agg(json_build_object('id', id, 'tx', tx, 'pos', pos, 'stale', stale, 'created_at', created_at) ORDER BY tx::xid8, pos), '[]') FROM push_ev)`;
  }

  async apply(output: unknown, pass: PassInfo): Promise<PartResult> {
    if (this.cursor.passed()) this.pendingJobs = false;
    const events = output as EventRef[];
    const first = events[0];
    this.metrics.followerAt(
      'push',
      first && { position: first.pos, created_at: first.created_at },
      pass.head,
    );
    const fresh = events.filter((e) => !e.stale);
    if (fresh.length) {
      await this.queue.addBulk(
        PUSH_JOB,
        fresh.map((e) => ({ data: { eventId: e.id }, opts: { jobId: e.id } })),
      );
      this.pendingJobs = true;
    }
    const last = events[events.length - 1];
    // a short batch read every message event below the bound: the cursor can jump to the bound itself,
    // so the next pass does not rescan the other events in between
    this.cursor.advance(
      events.length < BATCH || !last
        ? { txId: pass.bound, position: 0 }
        : { txId: last.tx, position: Number(last.pos) },
    );
    return { events: events.length, more: events.length >= BATCH };
  }
}
