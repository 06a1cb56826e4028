import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EventLogReader, type LogCursor } from '../events/event-log.reader';
import { EventNotifier } from '../events/event-notifier';
import { LogFollower } from '../events/log-follower';
import { QueueService } from '../infra/queue/queue.module';

export const PUSH_JOB = 'push.message' as const;
const RELAY = 'push';
const BATCH = 500;
/** Fallback poll; commits nudge the relay at once (on every instance, through Redis when present). */
const POLL_MS = 1_000;
/** A push about a message older than this is noise: such events are passed over (after an outage, say). */
export const PUSH_MAX_AGE_SECONDS = 15 * 60;

interface EventRef {
  id: string;
  tx_id: string;
  position: number;
  stale: boolean;
}

/**
 * Turns committed `message.created` events into push jobs. It reads the event log in (tx_id, position)
 * order below the settled bound (EventLogReader), so an event a slow transaction commits late is never
 * skipped; its cursor is its row in `event_relay_cursors`. Jobs are enqueued before the cursor moves
 * (at-least-once; the job id is the event id, so a repeat enqueue is absorbed by the queue).
 */
@Injectable()
export class PushRelay {
  private readonly follower: LogFollower;

  constructor(
    private readonly db: DataSource,
    private readonly queue: QueueService,
    notifier: EventNotifier,
    private readonly reader: EventLogReader,
  ) {
    this.follower = new LogFollower(
      new Logger('PushRelay'),
      notifier,
      () => this.drain(),
      () => POLL_MS,
    );
  }

  start(): void {
    this.follower.start();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  nudge(): void {
    this.follower.nudge();
  }

  /** Relays everything committed so far; returns the number of jobs enqueued. */
  async drain(): Promise<number> {
    let jobs = 0;
    for (;;) {
      const pass = await this.pass();
      if (!pass) break;
      jobs += pass.jobs;
      if (pass.events < BATCH) break;
    }
    return jobs;
  }

  /**
   * One batch: read past the shared cursor (below the settled bound), enqueue (idempotent job ids),
   * then move the cursor forward only (several workers may race; none moves it back). Nothing remote
   * happens inside a transaction, and a crash between enqueue and cursor move only repeats jobs the
   * queue absorbs. Null when nothing new is committed.
   */
  private async pass(): Promise<{ events: number; jobs: number } | null> {
    const bound = await this.reader.bound();
    const [cur] = await this.db.query<{ tx_id: string; position: number }[]>(
      `SELECT tx_id::text AS tx_id, position FROM event_relay_cursors WHERE name = $1`,
      [RELAY],
    );
    if (!cur) return null;
    const events: EventRef[] = await this.db.query(
      `SELECT id, tx_id::text AS tx_id, position, created_at < now() - make_interval(secs => $5) AS stale FROM events
        WHERE (tx_id, position) > ($1::xid8, $2::bigint) AND tx_id < $3::xid8 AND type = 'message.created'
        ORDER BY tx_id, position LIMIT $4`,
      [cur.tx_id, cur.position, bound, BATCH, PUSH_MAX_AGE_SECONDS],
    );
    const last = events[events.length - 1];
    const fresh = events.filter((e) => !e.stale);
    if (fresh.length) {
      await this.queue.addBulk(
        PUSH_JOB,
        fresh.map((e) => ({ data: { eventId: e.id }, opts: { jobId: e.id } })),
      );
    }
    // a short batch read every message event below the bound: the cursor can jump to the bound itself,
    // so the next pass does not rescan the other events in between
    const next: LogCursor =
      events.length < BATCH || !last
        ? { txId: bound, position: 0 }
        : { txId: last.tx_id, position: Number(last.position) };
    await this.db.query(
      `UPDATE event_relay_cursors SET tx_id = $2::xid8, position = $3, updated_at = now()
        WHERE name = $1 AND (tx_id, position) < ($2::xid8, $3::bigint)`,
      [RELAY, next.txId, next.position],
    );
    if (!events.length && next.txId === cur.tx_id && next.position === Number(cur.position)) return null;
    return { events: events.length, jobs: fresh.length };
  }
}
