import { Injectable } from '@nestjs/common';
import { LogTail, LogTailPart, PartResult, PassInfo, PassStatement } from '../events/log-tail';
import { Metrics } from '../ops/metrics';
import { ATTR, inSpan, linksToWriters, ROOT_CONTEXT, tracingOn } from '../ops/tracing/tracing';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { DeliveryJob, WebhookDispatcher } from './webhook-dispatcher';
import { WEBHOOK_EVENTS } from './webhook-events';

const RELAY = 'webhooks';
const BATCH = 200;
/** The log types webhooks are offered (a constant of the statement's text). */
const TYPES = `ARRAY[${WEBHOOK_EVENTS.map((t) => `'${t}'`).join(', ')}]::text[]`;
/**
 * CONTRACT §19: of a shadowed message, webhooks get `message.created` (marked `shadowed: true`) and
 * nothing else; these are the other types about one message.
 */
const ABOUT_A_MESSAGE = `ARRAY['message.updated', 'message.deleted', 'message.pinned', 'message.unpinned',
  'message.reaction.added', 'message.reaction.removed', 'poll.voted', 'poll.closed']::text[]`;

interface RelayOutput {
  /** This instance held the cursor row (another one holds it, or there was nothing to relay, otherwise). */
  locked: boolean;
  events: number;
  /** The deliveries created (new ones only: a pair that already had one is skipped). */
  ids: string[];
  /** The first event read (the oldest not yet relayed), for the lag. */
  first: { position: number; created_at: string } | null;
  /** Tracing on: the events read that were written in a traced span. */
  traces?: { id: string; traceparent: string }[] | null;
}

/**
 * Turns committed events of the log into deliveries, as its part of the shared log pass (LogTail: the
 * log is read in (tx_id, position) order and only below the settled bound, so an event committed late
 * by a slow transaction is never skipped). In the pass's one statement it looks whether settled events
 * follow its cursor (an index probe), and only then locks the cursor row (FOR UPDATE SKIP LOCKED: of
 * several instances one relays at a time), reads up to BATCH events after it, inserts one pending
 * delivery per enabled webhook of the workspace that subscribes to the type and did not yet exist
 * when the event committed, and moves the cursor, all in that statement's transaction. Jobs are
 * enqueued after it committed; a job the queue refuses waits in the dispatcher's backlog (retried
 * every pass) and, should the process die, in the sweeper's reach.
 */
@Injectable()
export class WebhookRelay implements LogTailPart {
  readonly name = 'webhooks';
  private started = false;
  /** The output of the last pass (for drain). */
  private drained: RelayOutput | null = null;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
    private readonly tail: LogTail,
    private readonly metrics: Metrics,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.tail.register(this);
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.tail.unregister(this);
  }

  /** Relays everything committed so far (runs passes until one finds nothing). For tests and benchmarks. */
  async drain(): Promise<number> {
    let created = 0;
    for (let i = 0; i < 10_000; i++) {
      this.drained = null;
      await this.tail.passNow();
      const last = this.drained as RelayOutput | null;
      if (!last) break;
      created += last.ids.length;
      if (!last.events) break;
    }
    return created;
  }

  build(q: PassStatement): string | null {
    if (!this.started) return null;
    const bound = q.bound;
    // whether a settled event follows the cursor: the first event after it, in log order, as an ordered
    // LIMIT 1 probe of (tx_id, position). Not EXISTS: the planner drops the ORDER BY of an EXISTS and
    // plans it for its first match, which it expects early; on a large log it then took
    // events_workspace_order with no workspace to bound it, or could take a sequential scan, walking
    // every old event. Only the (tx_id, position) index gives this order, so the range is its Index Cond.
    q.cte(
      'wh_cur',
      `SELECT c.tx_id, c.position FROM event_relay_cursors c
        WHERE c.name = '${RELAY}'
          AND (SELECT e.tx_id FROM events e WHERE (e.tx_id, e.position) > (c.tx_id, c.position) AND e.tx_id < ${bound}
                ORDER BY e.tx_id, e.position LIMIT 1) IS NOT NULL
        FOR UPDATE SKIP LOCKED`,
    );
    // the cursor as scalar subqueries, so the range is an index condition (a join would scan)
    q.cte(
      'wh_ev',
      `SELECT e.id, e.workspace_id, e.type, e.tx_id, e.position, e.created_at,${tracingOn() ? ' e.traceparent,' : ''}
              CASE WHEN e.type = ANY (${ABOUT_A_MESSAGE})
                   THEN COALESCE(e.payload->'message'->>'id', e.payload->'reaction'->>'message_id', e.payload->>'message_id')::uuid END AS about
         FROM events e
        WHERE (e.tx_id, e.position) > ((SELECT tx_id FROM wh_cur), (SELECT position FROM wh_cur)) AND e.tx_id < ${bound}
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    q.cte('wh_last', `SELECT tx_id, position FROM wh_ev ORDER BY tx_id DESC, position DESC LIMIT 1`);
    q.cte(
      'wh_out',
      `SELECT v.* FROM wh_ev v
        WHERE v.about IS NULL OR NOT EXISTS (SELECT 1 FROM messages msg WHERE msg.id = v.about AND msg.shadowed)`,
    );
    q.cte('wh_new', this.deliveries.insertPendingSql('wh_out', TYPES));
    q.cte(
      'wh_move',
      `UPDATE event_relay_cursors c SET tx_id = l.tx_id, position = l.position, updated_at = now()
         FROM wh_last l WHERE c.name = '${RELAY}' AND (c.tx_id, c.position) < (l.tx_id, l.position) RETURNING 1`,
    );
    return `json_build_object('locked', EXISTS (SELECT 1 FROM wh_cur), 'events', (SELECT count(*) FROM wh_ev),
              'ids', (SELECT COALESCE(json_agg(id ORDER BY id), '[]') FROM wh_new),
              'first', (SELECT json_build_object('position', position, 'created_at', created_at) FROM wh_ev
                         ORDER BY tx_id, position LIMIT 1)${
                           tracingOn()
                             ? `,
              'traces', (SELECT json_agg(json_build_object('id', id, 'traceparent', traceparent))
                           FROM wh_ev WHERE traceparent IS NOT NULL)`
                             : ''
                         })`;
  }

  async apply(output: unknown, pass: PassInfo): Promise<PartResult> {
    const out = output as RelayOutput;
    this.drained = out;
    // nothing read: caught up, or another instance holds the cursor (and reports)
    this.metrics.followerAt('webhooks', out.first ?? undefined, pass.head);
    const jobs: DeliveryJob[] = out.ids.map((id) => ({ deliveryId: id, attempt: 1 }));
    const enqueue = async () => {
      await this.dispatcher.flushBacklog();
      await this.dispatcher.enqueue(jobs);
    };
    // traced: the pass (its statement made the deliveries) and the enqueue, linked to each event's writer
    if (tracingOn() && out.traces?.length) {
      await inSpan(
        'chat.webhooks relay',
        {
          parent: ROOT_CONTEXT,
          startTime: pass.startedMs,
          links: linksToWriters(out.traces),
          attributes: { [ATTR.events]: out.events, 'chat.webhook.deliveries': out.ids.length },
        },
        enqueue,
      );
    } else await enqueue();
    return { events: out.events, more: out.events >= BATCH };
  }
}
