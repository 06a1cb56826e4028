import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { TtlLru } from '../common/ttl-lru';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { rows } from '../infra/database/sql';
import { RateLimiter } from '../infra/rate-limit/rate-limiter';
import { Metrics, Quota, QUOTAS } from '../ops/metrics';
import { WorkspaceChanges } from '../workspaces/workspace-changes';

/** A workspace's quotas in force: its own where the operator set one, else the instance's defaults. */
export type Quotas = Record<Quota, number>;
/** The quotas the operator set for a workspace (the rest follow the defaults). */
export type QuotaOverrides = Partial<Quotas>;

export const QUOTA_BOUNDS: Record<Quota, { min: number; max: number }> = {
  requests_per_second: { min: 1, max: 1_000_000 },
  concurrent_requests: { min: 1, max: 100_000 },
  sockets: { min: 1, max: 10_000_000 },
};

const CACHE_MAX = 10_000;
const CACHE_TTL_MS = 30_000;

/**
 * What one tenant may take from a shared instance (issue 29): requests per second (across instances
 * through the Redis rate limiter, per instance while Redis is away), requests in progress per instance
 * (LoadShedder holds the others back; each holds at most one database connection at a time, so this
 * bounds the workspace's share of the pool), and sockets per instance. Over a quota: 429 RATE_LIMITED with Retry-After, counted by workspace
 * in chat_workspace_quota_refusals_total. The operator's overrides (the `quotas` column) are cached like
 * the settings: 30 s at most, dropped at once on every instance when they change.
 */
@Injectable()
export class WorkspaceQuotas {
  private readonly cache = new TtlLru<string, Quotas>(CACHE_MAX, CACHE_TTL_MS);
  private readonly loading = new Map<string, Promise<Quotas>>();
  private readonly sockets = new Map<string, number>();
  private readonly defaults: Quotas;
  /** Bumped when overrides change: a read that started before does not fill the cache. */
  private generation = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly db: DataSource,
    private readonly limiter: RateLimiter,
    private readonly metrics: Metrics,
    private readonly changes: WorkspaceChanges,
  ) {
    this.defaults = {
      requests_per_second: config.SERVICE_WORKSPACE_REQUESTS_PER_SECOND,
      concurrent_requests: config.SERVICE_WORKSPACE_CONCURRENT_REQUESTS,
      sockets: config.SERVICE_WORKSPACE_SOCKETS,
    };
    changes.onChange((c) => {
      if (c.kind === 'quotas' || c.kind === 'deleted') this.forget(() => this.cache.delete(c.workspaceId));
    });
    changes.onResync(() => this.forget(() => this.cache.clear()));
  }

  /**
   * Counts one request of the workspace against its requests-per-second quota, or throws RATE_LIMITED;
   * answers the quotas in force (the concurrency quota is LoadShedder's to apply).
   */
  async admit(workspaceId: string): Promise<Quotas> {
    const quotas = await this.quotasOf(workspaceId);
    const rate = await this.limiter.hit(`ws:${workspaceId}`, quotas.requests_per_second, 1000);
    if (!rate.allowed) {
      this.metrics.quotaRefused(workspaceId, 'requests_per_second');
      throw new AppError(
        'RATE_LIMITED',
        `This workspace is over its quota of ${quotas.requests_per_second} requests per second`,
        undefined,
        rate.retryAfterMs / 1000,
      );
    }
    return quotas;
  }

  /**
   * Counts a socket of the workspace in on this instance, or throws RATE_LIMITED when it already has its
   * quota of them. The check and the count are one step (a burst of handshakes cannot all pass one
   * check); the answer lets the socket go, once (later calls do nothing).
   */
  async admitSocket(workspaceId: string): Promise<() => void> {
    const quotas = await this.quotasOf(workspaceId);
    const n = this.sockets.get(workspaceId) ?? 0;
    if (n >= quotas.sockets) {
      this.metrics.quotaRefused(workspaceId, 'sockets');
      throw new AppError(
        'RATE_LIMITED',
        `This workspace has ${quotas.sockets} sockets on this instance, its quota; reconnect later`,
        undefined,
        5,
      );
    }
    this.sockets.set(workspaceId, n + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.sockets.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.sockets.set(workspaceId, left);
      else this.sockets.delete(workspaceId);
    };
  }

  /** The quotas in force for a workspace and the ones the operator set; NOT_FOUND when there is none. */
  async describe(workspaceId: string): Promise<{ quotas: Quotas; overrides: QuotaOverrides }> {
    const overrides = await this.read(workspaceId);
    return { quotas: { ...this.defaults, ...overrides }, overrides };
  }

  /** Sets (a number) or clears (null) some of a workspace's quotas; the others stay as they are. */
  async update(
    workspaceId: string,
    patch: Partial<Record<Quota, number | null>>,
  ): Promise<{ quotas: Quotas; overrides: QuotaOverrides }> {
    const set: QuotaOverrides = {};
    const cleared: Quota[] = [];
    for (const q of QUOTAS) {
      const v = patch[q];
      if (v === null) cleared.push(q);
      else if (v !== undefined) set[q] = v;
    }
    // one statement: the keys set merged in, the keys cleared taken out
    const [row] = await rows<{ quotas: Record<string, unknown> }>(
      this.db.manager,
      `UPDATE workspaces SET quotas = (quotas || $2::jsonb) - $3::text[], updated_at = now()
       WHERE id = $1 RETURNING quotas`,
      [workspaceId, JSON.stringify(set), cleared],
    );
    if (!row) throw AppError.notFound('Workspace');
    this.changes.changed(workspaceId, 'quotas');
    const overrides = overridesOf(row.quotas);
    return { quotas: { ...this.defaults, ...overrides }, overrides };
  }

  private forget(drop: () => void): void {
    this.generation++;
    this.loading.clear();
    drop();
  }

  /** The quotas in force: from the cache, else read once however many ask at the same time. */
  private quotasOf(workspaceId: string): Quotas | Promise<Quotas> {
    return this.cache.get(workspaceId) ?? this.load(workspaceId);
  }

  private load(workspaceId: string): Promise<Quotas> {
    let p = this.loading.get(workspaceId);
    if (!p) {
      const started = Date.now(); // the TTL counts from before the read
      const gen = this.generation;
      p = this.read(workspaceId)
        .then((overrides) => {
          const quotas = { ...this.defaults, ...overrides };
          if (gen === this.generation) this.cache.set(workspaceId, quotas, started);
          return quotas;
        })
        .finally(() => {
          // a read made stale by a change is no longer the one in `loading`: leave the newer one
          if (this.loading.get(workspaceId) === p) this.loading.delete(workspaceId);
        });
      this.loading.set(workspaceId, p);
    }
    return p;
  }

  private async read(workspaceId: string): Promise<QuotaOverrides> {
    const [row] = await rows<{ quotas: Record<string, unknown> }>(
      this.db.manager,
      `SELECT quotas FROM workspaces WHERE id = $1`,
      [workspaceId],
    );
    if (!row) throw AppError.notFound('Workspace');
    return overridesOf(row.quotas);
  }
}

/** The stored overrides that are quotas and within their bounds (anything else stored is ignored). */
function overridesOf(stored: Record<string, unknown>): QuotaOverrides {
  const out: QuotaOverrides = {};
  for (const q of QUOTAS) {
    const v = stored?.[q];
    if (Number.isInteger(v) && (v as number) >= QUOTA_BOUNDS[q].min && (v as number) <= QUOTA_BOUNDS[q].max)
      out[q] = v as number;
  }
  return out;
}
