import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DeliveryStatus, SigningMode } from './webhook-events';

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  workspace_id: string;
  event_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  cycle_start: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  attempt: number;
  started_at: Date;
  duration_ms: number;
  outcome: string;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
}

/** What an attempt needs besides the delivery: the webhook as it is now and the event (null once pruned). */
export interface DeliveryContext {
  url: string;
  allow_private_networks: boolean;
  enabled: boolean;
  signing: SigningMode;
  secret_sealed: string | null;
  event_type: string | null;
  payload: Record<string, unknown> | null;
  event_created_at: Date | null;
  /** The traceparent of the span that wrote the event (tracing on), which the attempt's span continues. */
  traceparent: string | null;
}

export interface AttemptOutcome {
  status: DeliveryStatus;
  /** Delay before the next attempt when status stays pending. */
  retryInMs: number | null;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  startedAt: Date;
  durationMs: number;
  /** For the attempt log: succeeded, failed, retry, permanently_failed. */
  outcome: string;
}

const COLUMNS = `id, webhook_id, workspace_id, event_id, event, status, attempts, cycle_start, response_status, response_body,
  error, next_attempt_at, created_at, updated_at`;

/**
 * Delivery rows and their attempt log. A delivery is claimed for one attempt with a lease (token +
 * expiry) so two workers never attempt it at once, and a worker that died mid-attempt releases it by
 * letting the lease run out. UPDATE/DELETE … RETURNING are wrapped in CTEs (TypeORM answers a bare one
 * with [rows, rowCount]).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * SQL of a data-modifying CTE (for the relay's part of the log pass, LogTail) that inserts one pending
   * delivery per enabled webhook of the event's workspace that subscribes to its type and did not yet
   * exist when the event committed (its creating snapshot does not see the event's transaction), for the
   * events of `source` (a CTE with id, workspace_id, type, tx_id, position) whose type is in `types`,
   * skipping pairs that already have one, and returns the new deliveries' ids. The webhooks are looked
   * up per workspace of the batch (by index), whatever the plan's estimates.
   *
   * Ids are UUIDv7 made in SQL, ordered like the application's (newId): the statement's start in
   * milliseconds, then its sub-millisecond fraction (12 bits), then the pair's rank in (event log order,
   * webhook) (14 bits), then random bits; so the deliveries of one pass list in event order, and a later
   * pass's after an earlier one's.
   */
  insertPendingSql(source: string, types: string): string {
    const ts = `extract(epoch FROM statement_timestamp())`;
    const id = `encode(
        substring(int8send(floor(${ts} * 1000)::bigint) FROM 3)
        || substring(int4send(28672 + (floor(${ts} * 4096000)::bigint % 4096)::int) FROM 3)
        || substring(int4send(32768 + (p.n % 16384)::int) FROM 3)
        || substring(uuid_send(gen_random_uuid()) FROM 11), 'hex')::uuid`;
    return `INSERT INTO webhook_deliveries (id, webhook_id, workspace_id, event_id, event)
      SELECT ${id}, p.webhook_id, p.workspace_id, p.event_id, p.event
        FROM (SELECT w.id AS webhook_id, v.workspace_id, v.id AS event_id, v.type AS event,
                     row_number() OVER (ORDER BY v.tx_id, v.position, w.id) AS n
                FROM (SELECT DISTINCT workspace_id FROM ${source}) ws
                CROSS JOIN LATERAL (SELECT w.id, w.events, w.created_snapshot FROM webhooks w
                                     WHERE w.workspace_id = ws.workspace_id AND w.enabled OFFSET 0) w
                JOIN ${source} v ON v.workspace_id = ws.workspace_id AND v.type = ANY (w.events)
                                AND NOT pg_visible_in_snapshot(v.tx_id, w.created_snapshot)
               WHERE v.type = ANY (${types})) p
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id`;
  }

  async list(
    workspaceId: string,
    webhookId: string,
    opts: { limit: number; beforeId?: string; status?: DeliveryStatus },
  ): Promise<DeliveryRow[]> {
    return this.db.query(
      `SELECT ${COLUMNS} FROM webhook_deliveries
        WHERE workspace_id = $1 AND webhook_id = $2
          AND ($3::text IS NULL OR status = $3::text)
          AND ($4::uuid IS NULL OR id < $4::uuid)
        ORDER BY id DESC LIMIT $5`,
      [workspaceId, webhookId, opts.status ?? null, opts.beforeId ?? null, opts.limit],
    );
  }

  async find(workspaceId: string, webhookId: string, id: string): Promise<DeliveryRow | null> {
    const rows: DeliveryRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM webhook_deliveries WHERE workspace_id = $1 AND webhook_id = $2 AND id = $3`,
      [workspaceId, webhookId, id],
    );
    return rows[0] ?? null;
  }

  async attemptsOf(deliveryId: string): Promise<AttemptRow[]> {
    return this.db.query(
      `SELECT attempt, started_at, duration_ms, outcome, response_status, response_body, error
         FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt, started_at`,
      [deliveryId],
    );
  }

  /** A manual retry: any delivery that is not pending starts a new attempt cycle now. Null when pending (or absent). */
  async resetForRetry(workspaceId: string, webhookId: string, id: string): Promise<DeliveryRow | null> {
    const rows: DeliveryRow[] = await this.db.query(
      `WITH r AS (
         UPDATE webhook_deliveries
            SET status = 'pending', cycle_start = attempts, next_attempt_at = now(), updated_at = now()
          WHERE workspace_id = $1 AND webhook_id = $2 AND id = $3 AND status <> 'pending'
          RETURNING ${COLUMNS})
       SELECT * FROM r`,
      [workspaceId, webhookId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Takes the lease for attempt number `attempt` and returns the delivery with what the attempt needs
   * (the webhook as it is now, the event). Only a pending delivery whose previous attempt count
   * matches, that is due (with a little slack for clocks), and that nobody else holds qualifies, so a
   * stale or duplicated job is a no-op.
   */
  async claim(
    deliveryId: string,
    attempt: number,
    token: string,
    leaseMs: number,
  ): Promise<(DeliveryRow & DeliveryContext) | null> {
    const rows: (DeliveryRow & DeliveryContext)[] = await this.db.query(
      `WITH r AS (
         UPDATE webhook_deliveries
            SET lease_token = $3, lease_until = now() + $4 * interval '1 millisecond'
          WHERE id = $1 AND status = 'pending' AND attempts = $2 - 1
            AND (lease_until IS NULL OR lease_until < now())
            AND next_attempt_at <= now() + interval '2 seconds'
          RETURNING ${COLUMNS})
       SELECT r.*, w.url, w.allow_private_networks, w.enabled, w.signing, w.secret_sealed,
              e.type AS event_type, e.payload, e.created_at AS event_created_at, e.traceparent
         FROM r JOIN webhooks w ON w.id = r.webhook_id LEFT JOIN events e ON e.id = r.event_id`,
      [deliveryId, attempt, token, leaseMs],
    );
    return rows[0] ?? null;
  }

  async release(deliveryId: string, token: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2`,
      [deliveryId, token],
    );
  }

  /** Ends a claimed delivery without an attempt (webhook disabled, event gone). */
  async abandon(deliveryId: string, token: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries
          SET status = 'permanently_failed', error = $3, next_attempt_at = NULL, lease_token = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND lease_token = $2`,
      [deliveryId, token, error],
    );
  }

  /**
   * Records an attempt under the lease, in one statement (so atomically): the delivery's new state, the
   * attempt-log row, and the webhook's failure streak (+1 on a failure, disabling the webhook when it
   * reaches `threshold`; reset by a success, written only when there is a streak, to keep the row
   * cold). Null when the lease was lost (another worker took over, or the webhook was deleted), in
   * which case nothing is written.
   */
  async recordAttempt(
    deliveryId: string,
    token: string,
    attemptId: string,
    o: AttemptOutcome,
    streak: { success: boolean; threshold: number; reason: string },
  ): Promise<{ attempts: number; disabled: boolean } | null> {
    const rows: { attempts: number; disabled: boolean }[] = await this.db.query(
      `WITH d AS (
         UPDATE webhook_deliveries
            SET attempts = attempts + 1, status = $3, response_status = $4, response_body = $5, error = $6,
                next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $7 * interval '1 millisecond' ELSE NULL END,
                lease_token = NULL, lease_until = NULL, updated_at = now()
          WHERE id = $1 AND lease_token = $2
          RETURNING id, webhook_id, attempts),
       a AS (
         INSERT INTO webhook_attempts
                (id, delivery_id, attempt, started_at, duration_ms, outcome, response_status, response_body, error)
         SELECT $8, d.id, d.attempts, $9, $10, $11, $4, $5, $6 FROM d),
       w AS (
         UPDATE webhooks x
            SET consecutive_failures = CASE WHEN $12 THEN 0 ELSE x.consecutive_failures + 1 END,
                enabled = CASE WHEN NOT $12 AND x.enabled AND x.consecutive_failures + 1 >= $13 THEN false ELSE x.enabled END,
                disabled_at = CASE WHEN NOT $12 AND x.enabled AND x.consecutive_failures + 1 >= $13 THEN now() ELSE x.disabled_at END,
                disabled_reason = CASE WHEN NOT $12 AND x.enabled AND x.consecutive_failures + 1 >= $13 THEN $14 ELSE x.disabled_reason END
           FROM d
          WHERE x.id = d.webhook_id AND (NOT $12 OR x.consecutive_failures <> 0)
          RETURNING (x.enabled IS FALSE AND x.disabled_at = now()) AS disabled_now)
       SELECT d.attempts, COALESCE((SELECT bool_or(disabled_now) FROM w), false) AS disabled FROM d`,
      [
        deliveryId,
        token,
        o.status,
        o.responseStatus,
        o.responseBody,
        o.error,
        o.retryInMs ?? 0,
        attemptId,
        o.startedAt,
        o.durationMs,
        o.outcome,
        streak.success,
        streak.threshold,
        streak.reason,
      ],
    );
    return rows[0] ?? null;
  }

  /**
   * Pending deliveries whose attempt is overdue by more than `graceMs` and that nobody holds: their job
   * was lost (Redis down at enqueue, process died with an in-memory timer). Oldest first.
   */
  async overdue(graceMs: number, limit: number): Promise<{ id: string; attempts: number }[]> {
    return this.db.query(
      `SELECT id, attempts FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at < now() - $1 * interval '1 millisecond'
          AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at LIMIT $2`,
      [graceMs, limit],
    );
  }

  /**
   * Pending deliveries due now, counted up to `cap`: a range of the partial index on next_attempt_at
   * (pending rows only), never a scan of the table.
   */
  async dueCount(cap: number): Promise<number> {
    const [row] = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= now() LIMIT $1) d`,
      [cap],
    );
    return Number(row?.n ?? 0);
  }
}
