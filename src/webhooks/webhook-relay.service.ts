import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, EntitySubscriberInterface, TransactionCommitEvent } from 'typeorm';
import { newId } from '../common/ids';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { DeliveryJob, WebhookDispatcher } from './webhook-dispatcher';
import { isWebhookEvent } from './webhook-events';

const RELAY = 'webhooks';
const BATCH = 200;
const POLL_MS = 250;
/** Commits that happen close together share one relay pass. */
const NUDGE_DELAY_MS = 5;
/** Marks a transaction that cannot have written events, so its commit does not wake the relay. */
const QUIET = 'webhookRelayQuiet';

/**
 * The log position below which every event is committed (or will never exist): the oldest transaction
 * of *this database* still running (a prepared one included), else the snapshot's xmax. It refines
 * pg_snapshot_xmin, which is cluster-wide: a long transaction in another database on the same server
 * would otherwise stall the relay although it can never write to this event log. A transaction that
 * ends between the snapshot and the pg_stat_activity read is already visible to the next statement.
 */
export const COMMITTED_BOUND_SQL = `COALESCE(
  (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE xid(x) IN (SELECT backend_xid FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
                     UNION ALL SELECT transaction FROM pg_prepared_xacts WHERE database = current_database())),
  pg_snapshot_xmax(pg_current_snapshot()))`;

interface EventRef {
  id: string;
  workspace_id: string;
  type: string;
  tx_id: string;
  position: number;
}

/** Keeps our own transactions from waking the relay they belong to. */
export function quietTransaction(m: EntityManager): void {
  const qr = m.queryRunner;
  if (qr) qr.data = { ...(qr.data as Record<string, unknown>), [QUIET]: true };
}

/**
 * Turns committed events of the log into deliveries. It reads the log in (tx_id, position) order and
 * only up to the oldest transaction still running (COMMITTED_BOUND_SQL), so an event committed late by
 * a slow transaction is never skipped. For each event it inserts one pending delivery per enabled webhook
 * of the workspace that subscribes to the type and did not yet exist when the event committed, and
 * advances its cursor in the same transaction (the cursor row is locked with SKIP LOCKED, so of several
 * instances one relays at a time). Jobs are enqueued after the commit.
 *
 * Woken by polling, and by every commit in this process (a TypeORM transaction subscriber), which is
 * what keeps the lag low.
 */
@Injectable()
export class WebhookRelay {
  private readonly logger = new Logger('WebhookRelay');
  private cursor: { txId: string; position: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly subscriber: EntitySubscriberInterface = {
    afterTransactionCommit: (e: TransactionCommitEvent) => {
      if (!(e.queryRunner.data as Record<string, unknown> | undefined)?.[QUIET]) this.nudge();
    },
  };

  constructor(
    private readonly db: DataSource,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.db.subscribers.push(this.subscriber);
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const i = this.db.subscribers.indexOf(this.subscriber);
    if (i >= 0) this.db.subscribers.splice(i, 1);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Asks for a pass soon (coalesced). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(NUDGE_DELAY_MS);
  }

  /** Relays everything committed so far; returns the number of deliveries created. For tests and benchmarks. */
  async drain(): Promise<number> {
    let created = 0;
    await this.dispatcher.flushBacklog();
    for (;;) {
      const pass = await this.pass();
      if (!pass) break;
      created += pass.created;
      if (pass.events < BATCH) break;
    }
    return created;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return; // an earlier wake-up is already set
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, ms);
  }

  private run(): void {
    if (this.running || this.stopped) return;
    this.again = false;
    this.running = this.drain()
      .then(() => undefined)
      .catch((err: unknown) => this.logger.warn(`relay pass failed: ${String(err)}`))
      .finally(() => {
        this.running = null;
        this.schedule(this.again ? NUDGE_DELAY_MS : POLL_MS);
      });
  }

  /** One locked batch. Null when another instance holds the cursor or nothing new is committed. */
  private async pass(): Promise<{ events: number; created: number } | null> {
    if (this.cursor && !(await this.anythingNew(this.cursor))) return null;
    const result = await this.db.transaction(async (m) => {
      quietTransaction(m);
      // the snapshot bound is taken before the row lock gives this transaction an id of its own
      const [cur] = (await m.query(
        `SELECT tx_id::text AS tx_id, position, ${COMMITTED_BOUND_SQL}::text AS xmin
           FROM event_relay_cursors WHERE name = $1 FOR UPDATE SKIP LOCKED`,
        [RELAY],
      )) as { tx_id: string; position: number; xmin: string }[];
      if (!cur) return null;
      const events: EventRef[] = await m.query(
        `SELECT id, workspace_id, type, tx_id::text AS tx_id, position FROM events
          WHERE (tx_id, position) > ($1::xid8, $2::bigint) AND tx_id < $3::xid8
          ORDER BY tx_id, position LIMIT $4`,
        [cur.tx_id, cur.position, cur.xmin, BATCH],
      );
      const last = events[events.length - 1];
      if (!last) return { cursor: { txId: cur.tx_id, position: cur.position }, events: 0, ids: [] as string[] };
      const ids = await this.createDeliveries(m, events.filter((e) => isWebhookEvent(e.type)));
      await m.query(`UPDATE event_relay_cursors SET tx_id = $2::xid8, position = $3, updated_at = now() WHERE name = $1`, [
        RELAY,
        last.tx_id,
        last.position,
      ]);
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
    const pairs: { webhook_id: string; workspace_id: string; event_id: string; event: string }[] = await m.query(
      `SELECT w.id AS webhook_id, b.workspace_id, b.event_id, b.event
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::xid8[]) WITH ORDINALITY AS b(event_id, workspace_id, event, tx_id, ord)
         JOIN webhooks w ON w.workspace_id = b.workspace_id AND w.enabled AND b.event = ANY (w.events)
                        AND NOT pg_visible_in_snapshot(b.tx_id, w.created_snapshot)
        ORDER BY b.ord, w.id`,
      [events.map((e) => e.id), events.map((e) => e.workspace_id), events.map((e) => e.type), events.map((e) => e.tx_id)],
    );
    const inserted = await this.deliveries.insertPending(
      m,
      pairs.map((p) => ({ id: newId(), webhookId: p.webhook_id, workspaceId: p.workspace_id, eventId: p.event_id, event: p.event })),
    );
    return inserted.map((r) => r.id);
  }

  private async anythingNew(cursor: { txId: string; position: number }): Promise<boolean> {
    const rows: { found: boolean }[] = await this.db.query(
      `SELECT EXISTS (
         SELECT 1 FROM events
          WHERE (tx_id, position) > ($1::xid8, $2::bigint) AND tx_id < ${COMMITTED_BOUND_SQL}) AS found`,
      [cursor.txId, cursor.position],
    );
    return rows[0]?.found ?? false;
  }
}

function isAfter(a: { txId: string; position: number }, b: { txId: string; position: number }): boolean {
  const ta = BigInt(a.txId);
  const tb = BigInt(b.txId);
  return ta > tb || (ta === tb && a.position > b.position);
}
