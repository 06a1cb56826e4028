import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { createHash } from 'crypto';
import type { NextFunction, Request, Response } from 'express';
import { IntervalHistogram, monitorEventLoopDelay } from 'perf_hooks';
import { isSignedUrlPath } from '../attachments/uploads.service';
import { AppError, errorBody } from '../common/errors/app-error';
import { TtlLru } from '../common/ttl-lru';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { Metrics, ShedReason } from '../ops/metrics';

/** How often the event loop's delay is read (the mean over this period), and waiting requests timed out. */
const TICK_MS = 25;
const LOOP_SAMPLE_MS = 250;
const RATE_SAMPLE_MS = 500;
const LOOP_RESOLUTION_MS = 10;
/** Requests waiting for a turn of the instance, at most, per request it may have in flight. */
const QUEUE_PER_SLOT = 8;
/** Requests of one workspace waiting behind its own quota, at most, per request of its quota. */
const QUEUE_PER_QUOTA_SLOT = 32;
/**
 * How long a request held back by its own workspace's concurrency quota may wait (at least): such a
 * wait holds nobody else back, and an app's honest bursts (every socket reconnecting to the instance
 * that took over, each catching up) pass through it instead of being refused.
 */
export const QUOTA_WAIT_MS = 5000;

/** Paths never shed: the probes and the scrape must answer while the instance is busy. */
const NEVER_SHED = new Set(['/healthz', '/readyz', '/metrics']);

/** A request waiting in its workspace's queue (Tenant.queue). */
interface Waiter {
  since: number;
  admit: () => void;
  /** Answers the request 503 (the instance is full) or 429 (its workspace is at its concurrency quota). */
  refuse: (reason: ShedReason | 'quota') => void;
}

/**
 * Whose requests take turns together: a workspace (its id), the operator (ADMIN), or UNVERIFIED (every
 * request whose credentials the instance has not seen the AuthGuard accept). What the instance knows of
 * it: its requests in flight and waiting, and its concurrency quota.
 */
interface Tenant {
  key: string;
  held: number;
  limit: number;
  /** When a turn of its own quota last came free with requests waiting: they wait for the instance from then. */
  freedAt: number;
  queue: Waiter[];
}

/** The turns of requests with credentials not (yet) seen accepted, or none: one bucket, served last. */
const UNVERIFIED = '?';
/** The turns of the operator's token. */
export const ADMIN = 'admin';
/** Credentials remembered as accepted (a digest each), and for how long. */
const MAX_VOUCHED = 50_000;
const VOUCHED_TTL_MS = 10 * 60_000;

const TENANT_KEY = Symbol('admission tenant');
const CREDENTIAL_KEY = Symbol('admission credential');
type Admitted = Request & { [TENANT_KEY]?: Tenant; [CREDENTIAL_KEY]?: string };

/**
 * What an instance takes on, fair between workspaces (issue 29). It works on at most
 * SERVICE_MAX_REQUESTS_IN_FLIGHT requests at once, and on at most its concurrency quota
 * (`concurrent_requests`) of one workspace's; the others wait for a turn in a queue per workspace, and
 * each turn goes to the waiting workspace with the fewest requests in flight (ties round-robin), so a
 * workspace that floods waits behind itself, not in front of the others, and holds no more of the
 * instance (and of its database connections) than its quota.
 * A request refused its turn is answered 503 UNAVAILABLE (the instance cannot keep up) once it waited
 * SERVICE_MAX_QUEUE_WAIT_MS, or 429 RATE_LIMITED once it waited QUOTA_WAIT_MS behind its own workspace's
 * quota; both with Retry-After: 1. It is answered at once when more wait already than the instance
 * frees turns for within that wait (at the rate it has been finishing requests), or when the
 * instance has been full for longer than SERVICE_MAX_QUEUE_WAIT_MS: sustained overload, not a burst
 * (the idea of CoDel: a standing queue only adds delay). While the event loop runs late by more than SERVICE_MAX_EVENT_LOOP_DELAY_MS (the mean
 * over 250 ms, from perf_hooks' event-loop delay histogram: the idea of @fastify/under-pressure), a
 * workspace that has its share of the requests in flight is refused at once (503).
 *
 * A request takes its workspace's turns only with credentials the AuthGuard has already accepted on
 * this instance (WorkspaceQuotaGuard vouches for them, with the workspace's quota; a digest of the
 * Authorization header is remembered): naming another workspace's API key or `kid` takes nothing of its
 * turns. Every other request (a token not seen yet, bad credentials, none) takes the turns of one
 * UNVERIFIED bucket, with the default quota, served after every workspace. The probes, the scrape and
 * signed file URLs (streams) are never held. A request is counted once its body is read (app.factory.ts):
 * a client that sends its body slowly holds a connection, not a turn.
 *
 * A request admitted waits at most DATABASE_POOL_WAIT_MS for a PostgreSQL connection (the pool's own
 * timeout), then is answered 503 too.
 */
@Injectable()
export class LoadShedder implements OnModuleDestroy {
  private inFlight = 0;
  private queued = 0;
  /** Since when the instance has had its limit in flight, or 0 (a turn freed with nobody waiting). */
  private fullSince = 0;
  /** Requests finished since the last rate sample, and the smoothed rate (per second). */
  private finished = 0;
  private finishRate: number;
  private wasFull = false;
  private rateSampledAt = Date.now();
  /** Keys with requests in flight or waiting, or a learned quota; the waiting ones in round-robin order. */
  private readonly tenants = new Map<string, Tenant>();
  /** Digests of credentials the AuthGuard accepted, and whose turns they take. */
  private readonly vouched = new TtlLru<string, string>(MAX_VOUCHED, VOUCHED_TTL_MS);
  private readonly waiting = new Map<string, Tenant>();
  private loopDelayMs = 0;
  private loopSampledAt = Date.now();
  private readonly loop: IntervalHistogram | null;
  private readonly ticker: NodeJS.Timeout;
  private readonly limit: number;
  private readonly defaultTenantLimit: number;
  private readonly maxWaitMs: number;
  private readonly quotaWaitMs: number;
  private readonly maxLoopDelayMs: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.limit = config.maxRequestsInFlight > 0 ? config.maxRequestsInFlight : Infinity;
    this.defaultTenantLimit = config.SERVICE_WORKSPACE_CONCURRENT_REQUESTS;
    this.maxWaitMs = config.SERVICE_MAX_QUEUE_WAIT_MS;
    this.quotaWaitMs = Math.max(QUOTA_WAIT_MS, this.maxWaitMs);
    // until measured while full: as many turns per wait as requests in flight
    this.finishRate = Number.isFinite(this.limit) ? (this.limit * 1000) / this.maxWaitMs : Infinity;
    this.maxLoopDelayMs = config.maxEventLoopDelayMs;
    this.loop = this.maxLoopDelayMs > 0 ? monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS }) : null;
    this.loop?.enable();
    this.ticker = setInterval(() => this.tick(), TICK_MS).unref();
    metrics.onScrape(() => {
      metrics.requestsInFlight.set(this.inFlight);
      metrics.requestsQueued.set(this.queued);
      metrics.eventLoopDelay.set(this.loopDelayMs / 1000);
    });
  }

  onModuleDestroy(): void {
    clearInterval(this.ticker);
    this.loop?.disable();
  }

  /**
   * The AuthGuard accepted this request's credentials (WorkspaceQuotaGuard tells): its next requests take
   * the turns of `key` (a workspace id, or ADMIN), whose concurrency quota is `concurrentRequests` (when
   * known; the default until then).
   */
  vouch(req: Request, key: string, concurrentRequests?: number): void {
    const r = req as Admitted;
    if (!r[TENANT_KEY]) return; // never held (a probe), or admission is off
    if (r[TENANT_KEY].key === UNVERIFIED && r[CREDENTIAL_KEY]) this.vouched.set(r[CREDENTIAL_KEY], key);
    const t = this.tenantOf(key);
    if (concurrentRequests !== undefined && t.limit !== concurrentRequests) {
      t.limit = concurrentRequests;
      if (this.queued) this.serve();
    }
  }

  /** The Express middleware: admits, holds or refuses the request; an admitted one counts until its answer is over. */
  middleware(): (req: Request, res: Response, next: NextFunction) => void {
    return (req, res, next) => {
      if (NEVER_SHED.has(req.path) || isSignedUrlPath(req.path)) return next();
      const authorization = req.headers.authorization;
      const credential = authorization ? credentialDigest(authorization) : undefined;
      const tenant = this.tenantOf((credential && this.vouched.get(credential)) || UNVERIFIED);
      (req as Admitted)[CREDENTIAL_KEY] = credential;
      const admit = () => {
        if (++this.inFlight >= this.limit && !this.fullSince) {
          this.fullSince = Date.now();
          this.wasFull = true;
        }
        tenant.held++;
        (req as Admitted)[TENANT_KEY] = tenant;
        res.once('close', () => this.leave(tenant));
        next();
      };
      const refuse = (reason: ShedReason | 'quota') => {
        if (reason === 'quota') {
          if (tenant.key !== UNVERIFIED && tenant.key !== ADMIN)
            this.metrics.quotaRefused(tenant.key, 'concurrent_requests');
        } else this.metrics.shed[reason].inc();
        if (res.headersSent || res.destroyed) return;
        const error =
          reason === 'quota'
            ? new AppError(
                'RATE_LIMITED',
                `This workspace has ${tenant.limit} requests in progress on this instance, its quota`,
              )
            : new AppError('UNAVAILABLE', 'The service is overloaded, try again shortly');
        res.setHeader('Retry-After', '1');
        res
          .status(reason === 'quota' ? 429 : 503)
          .json(errorBody(error, (req as Request & { id?: string }).id));
      };
      if (this.loop && this.loopDelayMs > this.maxLoopDelayMs && tenant.held >= this.fairShare())
        return refuse('event_loop');
      if (!tenant.queue.length && tenant.held < tenant.limit && this.inFlight < this.limit) return admit();
      if (tenant.held >= tenant.limit) {
        if (tenant.queue.length >= QUEUE_PER_QUOTA_SLOT * tenant.limit) return refuse('quota');
      } else if (
        Math.min(this.waitingForInstance(), QUEUE_PER_SLOT * this.limit) >=
        Math.min(this.turnsPerWait(), QUEUE_PER_SLOT * this.limit)
      )
        return refuse('queue_full'); // more wait already than the instance frees turns for in a wait
      // full for longer than a request may wait: not a burst that turns will absorb, so at once
      else if (this.fullSince && Date.now() - this.fullSince > this.maxWaitMs) return refuse('overloaded');
      const waiter: Waiter = { since: Date.now(), admit, refuse };
      tenant.queue.push(waiter);
      this.queued++;
      if (tenant.queue.length === 1) this.waiting.set(tenant.key, tenant);
      // a client that gave up while waiting: its place goes to the next
      res.once('close', () => {
        const i = tenant.queue.indexOf(waiter);
        if (i >= 0) this.unqueue(tenant, i);
      });
    };
  }

  private tenantOf(key: string): Tenant {
    let t = this.tenants.get(key);
    if (!t) {
      if (this.tenants.size >= MAX_TENANTS) this.forgetIdle();
      t = { key, held: 0, limit: this.defaultTenantLimit, freedAt: 0, queue: [] };
      this.tenants.set(key, t);
    }
    return t;
  }

  /** Keys with nothing in flight or waiting are forgotten (their quota is learned again). */
  private forgetIdle(): void {
    for (const [k, t] of this.tenants) if (!t.held && !t.queue.length) this.tenants.delete(k);
  }

  /** Requests in flight one workspace may hold while the event loop is late. */
  private fairShare(): number {
    let busy = 0;
    for (const t of this.tenants.values()) if (t.held) busy++;
    return Math.max(1, Math.floor((Number.isFinite(this.limit) ? this.limit : 64) / Math.max(1, busy)));
  }

  /** Requests waiting for a turn of the instance (not behind their own workspace's quota). */
  private waitingForInstance(): number {
    let n = 0;
    for (const t of this.waiting.values()) n += Math.max(0, Math.min(t.queue.length, t.limit - t.held));
    return n;
  }

  /** How many turns the instance frees in SERVICE_MAX_QUEUE_WAIT_MS, at the rate it has been finishing requests. */
  private turnsPerWait(): number {
    return Math.max(1, (this.finishRate * this.maxWaitMs) / 1000);
  }

  private leave(tenant: Tenant): void {
    this.finished++;
    this.inFlight--;
    if (tenant.held-- === tenant.limit && tenant.queue.length) tenant.freedAt = Date.now();
    if (this.queued) this.serve();
    if (this.inFlight < this.limit) this.fullSince = 0;
  }

  /**
   * Gives the free turns to the waiting workspaces, each to the one with the fewest requests in flight
   * (ties round-robin), skipping those at their quota, and to UNVERIFIED only when no workspace waits;
   * a workspace's oldest request goes first.
   */
  private serve(): void {
    while (this.queued && this.inFlight < this.limit) {
      let next: Tenant | undefined;
      for (const t of this.waiting.values())
        if (
          t.held < t.limit &&
          (!next || next.key === UNVERIFIED || (t.key !== UNVERIFIED && t.held < next.held))
        )
          next = t;
      if (!next) return;
      const w = next.queue.shift()!;
      this.queued--;
      this.waiting.delete(next.key);
      if (next.queue.length) this.waiting.set(next.key, next); // its next request waits for the others' turns
      w.admit();
    }
  }

  private unqueue(t: Tenant, i: number): void {
    t.queue.splice(i, 1);
    this.queued--;
    if (!t.queue.length) this.waiting.delete(t.key);
  }

  private tick(): void {
    const now = Date.now();
    if (this.loop && now - this.loopSampledAt >= LOOP_SAMPLE_MS) {
      // the histogram counts from the moment a timer was due; its resolution is the timer's own period
      if (this.loop.count > 0) this.loopDelayMs = Math.max(0, this.loop.mean / 1e6 - LOOP_RESOLUTION_MS);
      this.loop.reset();
      this.loopSampledAt = now;
    }
    if (now - this.rateSampledAt >= RATE_SAMPLE_MS) {
      // requests finished per second while the instance was full (what it can do), smoothed over about
      // a second; a sample with room to spare says nothing of that
      if (this.fullSince || this.wasFull) {
        const rate = (this.finished * 1000) / (now - this.rateSampledAt);
        this.finishRate = Number.isFinite(this.finishRate) ? this.finishRate * 0.5 + rate * 0.5 : rate;
      }
      this.wasFull = false;
      this.finished = 0;
      this.rateSampledAt = now;
    }
    if (!this.queued) return;
    for (const t of [...this.waiting.values()]) {
      // the first (quota − in flight) wait for the instance, since they were put in the queue or since
      // their workspace's turn came free, whichever is later; the others wait behind the quota
      let forInstance = Math.max(0, t.limit - t.held);
      for (let i = 0; i < t.queue.length;) {
        const w = t.queue[i]!;
        const behindQuota = forInstance === 0;
        const waited = now - (behindQuota ? w.since : Math.max(w.since, t.freedAt));
        if (!behindQuota) forInstance--;
        if (waited >= (behindQuota ? this.quotaWaitMs : this.maxWaitMs)) {
          this.unqueue(t, i);
          w.refuse(behindQuota ? 'quota' : 'queue_wait');
          if (!behindQuota) t.freedAt = now; // its place goes to the next, who waits for the instance from now
        } else i++;
      }
    }
  }
}

/** Tenants the instance keeps track of before the idle ones are forgotten. */
const MAX_TENANTS = 10_000;

/** What the instance remembers of an Authorization header it saw accepted: a digest, not the secret. */
function credentialDigest(authorization: string): string {
  return createHash('sha256').update(authorization).digest('base64url');
}
