import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { SETTLED_BOUND, type LogCursor } from '../events/event-log.reader';
import { EventNotifier } from '../events/event-notifier';
import { LogFollower } from '../events/log-follower';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { DeliveryJob, WebhookDispatcher } from './webhook-dispatcher';
import { isWebhookEvent } from './webhook-events';

const RELAY = 'webhooks';
const BATCH = 200;
/** Fallback poll; commits with events nudge the relay at once (every instance, through Redis when present). */
const POLL_MS = 500;
/** Commits that happen close together share one relay pass. */
const NUDGE_DELAY_MS = 2;
const HELD_RETRY_MS = 10;

interface EventRef {
  id: string;
  workspace_id: string;
  type: string;
  tx_id: string;
  position: number;
}

/**
 * Turns committed events of the log into deliveries. It reads the log in (tx_id, position) order and
 * only below the settled bound (SETTLED_BOUND: the oldest transaction of this database still
 * running), so an event committed late by a slow transaction is never skipped. For each event it inserts
 * one pending delivery per enabled webhook of the workspace that subscribes to the type and did not yet
 * exist when the event committed, and advances its cursor in the same transaction (the cursor row is
 * locked with SKIP LOCKED, so of several instances one relays at a time). Jobs are enqueued after the
 * commit.
 *
 * Woken by EventNotifier (a commit that wrote events, on any instance) and by polling.
 */
@Injectable()
export class WebhookRelay {
  private readonly follower: LogFollower;
  private cursor: LogCursor | null = null;
  /** Committed events wait behind a transaction still running (which may write no events, so no nudge). */
  private held = false;
  /** Backs off from HELD_RETRY_MS to POLL_MS while the same long transaction holds the log back. */
  private heldDelay = HELD_RETRY_MS;

  constructor(
    private readonly db: DataSource,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
    notifier: EventNotifier,
  ) {
    this.follower = new LogFollower(
      new Logger('WebhookRelay'),
      notifier,
      () => this.drain(),
      () => (this.held ? this.heldDelay : POLL_MS),
      NUDGE_DELAY_MS,
    );
  }

  start(): void {
    this.follower.start();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  /** Asks for a pass soon (coalesced). */
  nudge(): void {
    this.follower.nudge();
  }

  /** Relays everything committed so far; returns the number of deliveries created. For tests and benchmarks. */
  async drain(): Promise<number> {
    let created = 0;
    await this.dispatcher.flushBacklog();
    for (;;) {
      const pass = await this.pass();
      if (!pass) break;
      created += pass.created;
      if (!pass.events) break;
    }
    return created;
  }

  /** One locked batch. Null when another instance holds the cursor or nothing new is committed. */
  private async pass(): Promise<{ events: number; created: number } | null> {
    if (this.cursor) {
      const state = await this.lookAhead(this.cursor);
      this.heldDelay = state.ready || !this.held ? HELD_RETRY_MS : Math.min(POLL_MS, this.heldDelay * 2);
      this.held = state.held;
      if (!state.ready) return null;
    }
    const result = await this.db.transaction(async (m) => {
      // the bound is read in a statement before the one that reads events (see SETTLED_BOUND); its
      // snapshot is taken before the row lock gives this transaction an id of its own
      const cursors: { tx_id: string; position: number; bound: string }[] = await m.query(
        `SELECT tx_id::text AS tx_id, position, ${SETTLED_BOUND}::text AS bound
           FROM event_relay_cursors WHERE name = $1 FOR UPDATE SKIP LOCKED`,
        [RELAY],
      );
      const cur = cursors[0];
      if (!cur) return null;
      const bound = cur.bound;
      const events: EventRef[] = await m.query(
        `SELECT e.id, e.workspace_id, e.type, e.tx_id::text AS tx_id, e.position FROM events e
          WHERE (e.tx_id, e.position) > ($1::xid8, $2::bigint) AND e.tx_id < $3::xid8
          ORDER BY e.tx_id, e.position LIMIT $4`,
        [cur.tx_id, cur.position, bound, BATCH],
      );
      const last = events[events.length - 1];
      if (!last)
        return { cursor: { txId: cur.tx_id, position: cur.position }, events: 0, ids: [] as string[] };
      const ids = await this.createDeliveries(
        m,
        events.filter((e) => isWebhookEvent(e.type)),
      );
      await m.query(
        `UPDATE event_relay_cursors SET tx_id = $2::xid8, position = $3, updated_at = now() WHERE name = $1`,
        [RELAY, last.tx_id, last.position],
      );
      return { cursor: { txId: last.tx_id, position: last.position }, events: events.length, ids };
    });
    if (!result) return null;
    if (!this.cursor || isAfter(result.cursor, this.cursor)) this.cursor = result.cursor;
    const jobs: DeliveryJob[] = result.ids.map((id) => ({ deliveryId: id, attempt: 1 }));
    await this.dispatcher.enqueue(jobs);
    return { events: result.events, created: jobs.length };
  }

  private async createDeliveries(m: EntityManager, events: EventRef[]): Promise<string[]> {
    if (!events.length) return [];
    const pairs: { webhook_id: string; workspace_id: string; event_id: string; event: string }[] =
      await m.query(
        `SELECT w.id AS webhook_id, b.workspace_id, b.event_id, b.event
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::xid8[]) WITH ORDINALITY AS b(event_id, workspace_id, event, tx_id, ord)
         JOIN webhooks w ON w.workspace_id = b.workspace_id AND w.enabled AND b.event = ANY (w.events)
                        AND NOT pg_visible_in_snapshot(b.tx_id, w.created_snapshot)
        ORDER BY b.ord, w.id`,
        [
          events.map((e) => e.id),
          events.map((e) => e.workspace_id),
          events.map((e) => e.type),
          events.map((e) => e.tx_id),
        ],
      );
    const inserted = await this.deliveries.insertPending(
      m,
      pairs.map((p) => ({
        id: newId(),
        webhookId: p.webhook_id,
        workspaceId: p.workspace_id,
        eventId: p.event_id,
        event: p.event,
      })),
    );
    return inserted.map((r) => r.id);
  }

  /** ready: settled events after the cursor; held: committed events after it that wait for the bound. */
  // One statement, so the bound and the look share a snapshot: an event whose transaction ends in between
  // may be missed here, but that commit nudges the relay again. The pass itself reads exactly.
  private async lookAhead(cursor: LogCursor): Promise<{ ready: boolean; held: boolean }> {
    const rows: { ready: boolean; held: boolean }[] = await this.db.query(
      `WITH b AS (SELECT ${SETTLED_BOUND} AS bound)
       SELECT EXISTS (SELECT 1 FROM events e, b WHERE (e.tx_id, e.position) > ($1::xid8, $2::bigint) AND e.tx_id < b.bound) AS ready,
              EXISTS (SELECT 1 FROM events e, b WHERE e.tx_id >= b.bound) AS held`,
      [cursor.txId, cursor.position],
    );
    return { ready: rows[0]?.ready ?? false, held: rows[0]?.held ?? false };
  }
}

function isAfter(a: LogCursor, b: LogCursor): boolean {
  const ta = BigInt(a.txId);
  const tb = BigInt(b.txId);
  return ta > tb || (ta === tb && a.position > b.position);
}
