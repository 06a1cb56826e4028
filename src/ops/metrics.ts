import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CLIENT_EVENTS, SERVER_EVENTS } from '../contract/realtime';

/*
 * Label values come from the small fixed sets below, never from ids: every series of every label set
 * is created at zero up front (rates and alerts work from the first increment, dashboards show every
 * line), and the hot paths use children resolved once, so a send allocates no label object.
 */
export const SEND_TYPES = ['regular', 'reply', 'system'] as const;
/** `rejected`: a rule refused it (membership, mute, ban, frozen, rate, slow mode, moderation); `invalid`: the request itself (400, 404, 413, 415); `failed`: the server (5xx). */
export const SEND_OUTCOMES = ['created', 'replayed', 'rejected', 'invalid', 'failed'] as const;
/** How a send arrived: a REST call, a socket event, or a scheduled message firing (CONTRACT §25). */
export const TRANSPORTS = ['rest', 'socket', 'scheduler'] as const;
export const FOLLOWERS = ['realtime', 'webhooks', 'push', 'search', 'previews'] as const;
export const WEBHOOK_OUTCOMES = ['succeeded', 'failed', 'retry', 'permanently_failed'] as const;
export const PUSH_OUTCOMES = ['sent', 'failed', 'invalid_token'] as const;
/**
 * `send`: the per-user message rate; `slow_mode`: a channel's slow mode; `socket_event`: a client event
 * over the user's socket budget; `socket_connect`: a handshake refused while that budget is spent;
 * `socket_cap`: an older socket closed for a user over SERVICE_SOCKETS_PER_USER.
 */
export const RATE_SCOPES = ['send', 'slow_mode', 'socket_event', 'socket_connect', 'socket_cap'] as const;
/**
 * Why an instance refused a request (503 UNAVAILABLE, src/admission/load-shedder.ts): `queue_wait`, it
 * waited SERVICE_MAX_QUEUE_WAIT_MS for a turn; `queue_full`, too many were waiting already; `overloaded`,
 * the instance had been full for longer than that wait (refused at once); `event_loop`,
 * the event loop ran late by more than SERVICE_MAX_EVENT_LOOP_DELAY_MS and its workspace had its share.
 */
export const SHED_REASONS = ['queue_wait', 'queue_full', 'overloaded', 'event_loop'] as const;
/** The per-workspace quotas (src/admission/workspace-quotas.ts). */
export const QUOTAS = ['requests_per_second', 'concurrent_requests', 'sockets'] as const;
/** Workspaces named in chat_workspace_quota_refusals_total before the rest are counted as `other`. */
export const MAX_WORKSPACE_SERIES = 1000;
const POOL_STATES = ['in_use', 'idle', 'waiting'] as const;

export type SendType = (typeof SEND_TYPES)[number];
export type SendOutcome = (typeof SEND_OUTCOMES)[number];
export type Transport = (typeof TRANSPORTS)[number];
export type Follower = (typeof FOLLOWERS)[number];
export type RateScope = (typeof RATE_SCOPES)[number];
export type ShedReason = (typeof SHED_REASONS)[number];
export type Quota = (typeof QUOTAS)[number];
export type PushOutcome = (typeof PUSH_OUTCOMES)[number];

export interface Inc {
  inc(value?: number): void;
}

/** One child per value of `values`, made at zero; `of` maps anything else to an `other` child (names a client chose). */
export function childrenOf<V extends string>(
  counter: Counter<string>,
  label: string,
  values: readonly V[],
  withOther = false,
): { of: (value: string) => Inc } & Record<V, Inc> {
  const map = new Map<string, Inc>();
  for (const v of withOther ? [...values, 'other'] : values) {
    counter.inc({ [label]: v }, 0);
    map.set(v, counter.labels({ [label]: v }));
  }
  const fallback = withOther ? map.get('other')! : { inc: () => undefined };
  return Object.assign(Object.fromEntries(map) as Record<V, Inc>, {
    of: (value: string) => map.get(value) ?? fallback,
  });
}

/** One registry per app (tests create several apps in one process, hence not the global one). */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  /** Readings taken when /metrics is scraped (the database pool, Redis, the webhook backlog). */
  private readonly readings: (() => Promise<void> | void)[] = [];

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly events = new Counter({
    name: 'chat_events_total',
    help: 'Events of the event log, by type, counted once by the realtime publisher (the leader) as it passes them',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly unhandledRejections = new Counter({
    name: 'process_unhandled_rejections_total',
    help: 'Promise rejections nobody handled (logged, never fatal), by kind: dependency (a database or Redis away) or other',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly fanoutFailures = new Counter({
    name: 'realtime_fanout_failures_total',
    help: 'Socket.IO emits and room changes that did not reach the other instances (Redis away); local sockets still got them',
    registers: [this.registry],
  });

  private readonly messagesSent = new Counter({
    name: 'chat_messages_sent_total',
    help: 'Sends that reached the send path (REST and socket), by type (regular, reply: a thread reply or a quote, system) and outcome (created, replayed: an idempotent repeat, rejected: a rule refused it, invalid: a bad request, failed: a server error)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly sendSeconds = new Histogram({
    name: 'chat_message_send_duration_seconds',
    help: "Time of a send from the server's view (after the request was parsed), by transport",
    labelNames: ['transport'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly socketsConnected = new Gauge({
    name: 'chat_sockets_connected',
    help: 'Sockets connected to this instance',
    registers: [this.registry],
  });
  private readonly socketEventsReceived = new Counter({
    name: 'chat_socket_events_received_total',
    help: "Client events received on this instance's sockets, by event (other: a name the service does not know)",
    labelNames: ['event'] as const,
    registers: [this.registry],
  });
  private readonly socketEventsEmitted = new Counter({
    name: 'chat_socket_events_emitted_total',
    help: 'Server events emitted by this instance, by event: one per emit to a room or socket list, whatever the number of sockets it reaches',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });
  readonly liveSends = new Counter({
    name: 'chat_realtime_live_sends_total',
    help: 'Sends this instance published to the sockets right after their commit (the log publisher skips them)',
    registers: [this.registry],
  });
  readonly heldTooLong = new Counter({
    name: 'chat_realtime_unnoted_sends_total',
    help: 'Sends the realtime publisher sent itself after waiting for a live publish that never was noted (an instance crashed between commit and publish, or its note was lost)',
    registers: [this.registry],
  });
  readonly publishLag = new Histogram({
    name: 'chat_realtime_publish_lag_seconds',
    help: "From an event's creation in the log (its transaction) to its emit by the realtime publisher",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly followerLagEvents = new Gauge({
    name: 'chat_event_follower_lag_events',
    help: 'Events written to the log from the first one a follower (realtime publisher, webhook relay, push relay) had not handed on to the head of the log, at its latest pass on this instance (log positions: approximate under concurrent writes); 0 when it found nothing new or does not run here',
    labelNames: ['follower'] as const,
    registers: [this.registry],
  });
  private readonly followerLagSeconds = new Gauge({
    name: 'chat_event_follower_lag_seconds',
    help: 'Age of the oldest event a follower had not handed on, at its latest pass on this instance; 0 when it found nothing new or does not run here',
    labelNames: ['follower'] as const,
    registers: [this.registry],
  });
  /** One counter for attempts and their outcome: `succeeded`, `failed` (terminal), `retry`, `permanently_failed`. */
  private readonly webhookDeliveries = new Counter({
    name: 'chat_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: succeeded, failed (a terminal answer), retry (will be tried again), permanently_failed (retries exhausted)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookAttemptSeconds = new Histogram({
    name: 'chat_webhook_attempt_duration_seconds',
    help: 'Duration of webhook HTTP attempts',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly webhookBacklog = new Gauge({
    name: 'chat_webhook_backlog',
    help: 'Webhook deliveries pending and due now (read at scrape time by instances that run the delivery workers; counted up to 100000)',
    registers: [this.registry],
  });
  private readonly pushSends = new Counter({
    name: 'chat_push_sends_total',
    help: 'Push notifications per device token, by outcome: sent, failed, invalid_token (the token was removed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'chat_rate_limited_total',
    help: 'Refusals by the rate limits, by scope: send, slow_mode, socket_event, socket_connect, socket_cap',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });
  private readonly shedRequests = new Counter({
    name: 'chat_shed_total',
    help: 'Requests an overloaded instance refused (503 UNAVAILABLE), by reason: queue_wait, queue_full, overloaded, event_loop',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /**
   * The one metric labelled by an id: which workspace met its quota is the point of it. A series is made
   * at a workspace's first refusal, for at most MAX_WORKSPACE_SERIES workspaces (then `other`).
   */
  private readonly quotaRefusals = new Counter({
    name: 'chat_workspace_quota_refusals_total',
    help: 'Requests and sockets refused (429 RATE_LIMITED) because their workspace met a quota, by workspace id and quota: requests_per_second, concurrent_requests, sockets',
    labelNames: ['workspace', 'quota'] as const,
    registers: [this.registry],
  });
  private readonly quotaSeries = new Set<string>();
  readonly requestsInFlight = new Gauge({
    name: 'chat_requests_in_flight',
    help: 'Requests this instance is working on (health and metrics not counted)',
    registers: [this.registry],
  });
  readonly requestsQueued = new Gauge({
    name: 'chat_requests_queued',
    help: 'Requests waiting for a turn (SERVICE_MAX_REQUESTS_IN_FLIGHT are in flight)',
    registers: [this.registry],
  });
  readonly eventLoopDelay = new Gauge({
    name: 'chat_event_loop_delay_seconds',
    help: "The event loop's mean delay over the last 250 ms, as load shedding reads it (0 when SERVICE_MAX_EVENT_LOOP_DELAY_MS is off)",
    registers: [this.registry],
  });
  /** Its children are made by the audit trail (ModerationAuditRepository), which knows the actions. */
  readonly moderationActions = new Counter({
    name: 'chat_moderation_actions_total',
    help: 'Moderation actions written to the audit trail, by action (automatic: flag, mask, reject, auto_mute; flag reviews: dismiss, unsend_message, ban_user, shadow_ban_user)',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  readonly dbPool = new Gauge({
    name: 'chat_db_pool_connections',
    help: 'Database pool connections by state: in_use, idle, waiting (requests queued for one); embedded PGlite is a pool of one',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly redisUp = new Gauge({
    name: 'chat_redis_up',
    help: "1 when this instance's Redis connection is ready, 0 when it is not; 1 without Redis (the embedded default has none to lose)",
    registers: [this.registry],
  });

  private readonly sent = Object.fromEntries(
    SEND_TYPES.map((t) => [
      t,
      Object.fromEntries(SEND_OUTCOMES.map((o) => [o, this.messagesSent.labels(t, o)])),
    ]),
  ) as Record<SendType, Record<SendOutcome, Inc>>;
  private readonly sendTime: Record<Transport, { observe(v: number): void }> = {
    rest: this.sendSeconds.labels('rest'),
    socket: this.sendSeconds.labels('socket'),
    scheduler: this.sendSeconds.labels('scheduler'),
  };
  readonly received = childrenOf(this.socketEventsReceived, 'event', CLIENT_EVENTS, true);
  readonly emitted = childrenOf(this.socketEventsEmitted, 'event', SERVER_EVENTS, true);
  readonly webhook = childrenOf(this.webhookDeliveries, 'outcome', WEBHOOK_OUTCOMES);
  readonly push = childrenOf(this.pushSends, 'outcome', PUSH_OUTCOMES);
  readonly limited = childrenOf(this.rateLimited, 'scope', RATE_SCOPES);
  readonly shed = childrenOf(this.shedRequests, 'reason', SHED_REASONS);

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    for (const t of SEND_TYPES)
      for (const o of SEND_OUTCOMES) this.messagesSent.inc({ type: t, outcome: o }, 0);
    for (const t of TRANSPORTS) this.sendSeconds.zero({ transport: t });
    for (const f of FOLLOWERS) this.followerAt(f);
    for (const s of POOL_STATES) this.dbPool.set({ state: s }, 0);
    this.redisUp.set(1);
  }

  /** A request or socket of the workspace refused by one of its quotas. */
  quotaRefused(workspaceId: string, quota: Quota): void {
    let workspace = workspaceId;
    if (!this.quotaSeries.has(workspace)) {
      if (this.quotaSeries.size >= MAX_WORKSPACE_SERIES) workspace = 'other';
      else this.quotaSeries.add(workspace);
    }
    this.quotaRefusals.inc({ workspace, quota });
  }

  /** One send: its outcome and how long the server took. */
  sendDone(type: SendType, outcome: SendOutcome, transport: Transport, seconds: number): void {
    this.sent[type][outcome].inc();
    this.sendTime[transport].observe(seconds);
  }

  /**
   * What a log follower found at a pass: `first`, the oldest event it had not handed on (none: it is
   * caught up, or does not run here), and the log's newest position.
   */
  followerAt(
    follower: Follower,
    first?: { position: number | string; created_at: Date | string },
    head = 0,
  ): void {
    const events = first ? head - Number(first.position) + 1 : 0;
    const seconds = first ? (Date.now() - new Date(first.created_at).getTime()) / 1000 : 0;
    this.followerLagEvents.set({ follower }, Math.max(first ? 1 : 0, events));
    this.followerLagSeconds.set({ follower }, Math.max(0, seconds));
  }

  /** Adds a reading taken at every scrape; one that fails leaves its gauges as they were. */
  onScrape(read: () => Promise<void> | void): void {
    this.readings.push(read);
  }

  /** The exposition text, after the scrape-time readings. */
  async scrape(): Promise<string> {
    await Promise.all(
      this.readings.map(async (read) => {
        try {
          await read();
        } catch {
          // a dependency away: its gauges keep their last value (chat_redis_up and /readyz say so)
        }
      }),
    );
    return this.registry.metrics();
  }

  /** Express middleware: times every request and labels it with its route template, not its URL. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        const route = (req.route as { path?: string } | undefined)?.path;
        end({
          method: req.method,
          route: route ? `${req.baseUrl}${route}` : 'unmatched',
          status: String(res.statusCode),
        });
      });
      next();
    };
  }
}
