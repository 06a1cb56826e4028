import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type LogCursor } from '../events/event-log.reader';
import { LeaderLease } from '../events/leader-lease';
import { FOLLOWER_TAG, LogTail, LogTailPart, PartResult, PassStatement } from '../events/log-tail';
import { QueueService } from '../infra/queue/queue.module';
import { RedisService } from '../infra/redis/redis.module';

export const PUSH_JOB = 'push.message' as const;
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
}

/**
 * Turns committed `message.created` events into push jobs, as its part of the shared log pass
 * (LogTail: (tx_id, position) order below the settled bound, so an event a slow transaction commits
 * late is never skipped). One instance relays at a time (a Redis lease); it follows the log with a
 * cursor in memory and saves it in `event_relay_cursors` with its next pass (in the same statement),
 * once the jobs of the events before it are enqueued: at least once (the job id is the event id, so a
 * repeat enqueue is absorbed by the queue). A new leader starts from the saved cursor, so only a
 * leader that died between enqueueing and its next pass leaves events to be enqueued again.
 */
@Injectable()
export class PushRelay implements LogTailPart {
  readonly name = 'push';
  private readonly logger = new Logger('PushRelay');
  private readonly lease: LeaderLease;
  private started = false;
  /** Where the next pass reads from (null: load the saved cursor first). */
  private cursor: LogCursor | null = null;
  private loading: Promise<void> | null = null;
  /** Everything before it is enqueued; saved with the next pass when it differs from `saved`. */
  private confirmed: LogCursor | null = null;
  private saved: LogCursor | null = null;
  private savedAt = 0;
  private saving: LogCursor | null = null;
  /** Jobs were enqueued since the cursor was last saved. */
  private pendingJobs = false;

  constructor(
    private readonly db: DataSource,
    private readonly queue: QueueService,
    private readonly tail: LogTail,
    redis: RedisService,
  ) {
    this.lease = new LeaderLease(redis, `${redis.prefix}push:leader`, (leading) => this.leading(leading));
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
    await this.save().catch((e: unknown) => this.logger.warn(`saving the cursor: ${String(e)}`));
    await this.lease.stop();
  }

  private leading(leading: boolean): void {
    this.cursor = null;
    this.confirmed = null;
    this.saved = null;
    if (leading && this.started) {
      this.loading = this.load()
        .then(() => this.tail.nudge())
        .catch((e: unknown) => this.logger.warn(`loading the cursor: ${String(e)}`))
        .finally(() => (this.loading = null));
    }
  }

  private async load(): Promise<void> {
    const [cur] = await this.db.query<{ tx_id: string; position: number }[]>(
      `${FOLLOWER_TAG} SELECT tx_id::text AS tx_id, position FROM event_relay_cursors WHERE name = $1`,
      [RELAY],
    );
    if (!cur || !this.lease.isLeader) return;
    this.cursor = { txId: cur.tx_id, position: Number(cur.position) };
    this.confirmed = this.saved = this.cursor;
    this.savedAt = Date.now();
  }

  build(q: PassStatement): string | null {
    if (!this.started || !this.lease.isLeader || !this.cursor || this.loading) return null;
    this.saving = null;
    if (this.confirmed && this.saved && isAfter(this.confirmed, this.saved) && (this.pendingJobs || Date.now() - this.savedAt > SAVE_EVERY_MS)) {
      this.saving = this.confirmed;
      const tx = q.param(this.confirmed.txId, 'xid8');
      const pos = q.param(this.confirmed.position, 'bigint');
      q.cte(
        'push_save',
        `UPDATE event_relay_cursors SET tx_id = ${tx}, position = ${pos}, updated_at = now()
          WHERE name = '${RELAY}' AND (tx_id, position) < (${tx}, ${pos}) RETURNING 1`,
      );
    }
    q.cte(
      'push_ev',
      `SELECT e.id, e.tx_id::text AS tx, e.position AS pos, e.created_at < now() - make_interval(secs => ${PUSH_MAX_AGE_SECONDS}) AS stale
         FROM events e
        WHERE (e.tx_id, e.position) > (${q.param(this.cursor.txId, 'xid8')}, ${q.param(this.cursor.position, 'bigint')})
          AND e.tx_id < ${q.bound} AND e.type = 'message.created'
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    return `(SELECT COALESCE(json_agg(json_build_object('id', id, 'tx', tx, 'pos', pos, 'stale', stale) ORDER BY tx::xid8, pos), '[]') FROM push_ev)`;
  }

  async apply(output: unknown, pass: { bound: string }): Promise<PartResult> {
    if (this.saving) {
      this.saved = this.saving;
      this.savedAt = Date.now();
      this.pendingJobs = false;
    }
    const events = output as EventRef[];
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
    const next: LogCursor = events.length < BATCH || !last ? { txId: pass.bound, position: 0 } : { txId: last.tx, position: Number(last.pos) };
    if (this.cursor && isAfter(next, this.cursor)) this.cursor = next;
    this.confirmed = this.cursor;
    return { events: events.length, more: events.length >= BATCH };
  }

  /** Saves the confirmed cursor now (on stop). */
  private async save(): Promise<void> {
    const c = this.confirmed;
    if (!c || (this.saved && !isAfter(c, this.saved))) return;
    await this.db.query(
      `${FOLLOWER_TAG} UPDATE event_relay_cursors SET tx_id = $2::xid8, position = $3, updated_at = now()
        WHERE name = $1 AND (tx_id, position) < ($2::xid8, $3::bigint)`,
      [RELAY, c.txId, c.position],
    );
    this.saved = c;
  }
}

function isAfter(a: LogCursor, b: LogCursor): boolean {
  const ta = BigInt(a.txId);
  const tb = BigInt(b.txId);
  return ta > tb || (ta === tb && a.position > b.position);
}
