import { RedisService } from '../redis/redis.module';

export interface RateDecision {
  allowed: boolean;
  /** When refused: milliseconds until a slot frees up. */
  retryAfterMs: number;
}

/** A sliding-window log limiter: at most `limit` hits per `windowMs` per key. */
export abstract class RateLimiter {
  abstract hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
}

/** In-process implementation (one instance, embedded default). */
export class MemoryRateLimiter extends RateLimiter {
  private readonly hits = new Map<string, number[]>();
  private sweeps = 0;

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const now = Date.now();
    const log = (this.hits.get(key) ?? []).filter((t) => t > now - windowMs);
    if (++this.sweeps % 1000 === 0) this.sweep(now, windowMs);
    if (log.length >= limit) {
      this.hits.set(key, log);
      return { allowed: false, retryAfterMs: log[0]! + windowMs - now };
    }
    log.push(now);
    this.hits.set(key, log);
    return { allowed: true, retryAfterMs: 0 };
  }

  private sweep(now: number, windowMs: number): void {
    for (const [k, log] of this.hits) if (!log.some((t) => t > now - windowMs)) this.hits.delete(k);
  }
}

// One round trip, atomic: the window pair's counts, and a grant of up to `want` slots when the sliding
// estimate leaves room. The previous window counts for the part of it still inside the sliding window,
// rounded up: ceil(prev × rest) + curr ≤ limit. MGET + INCRBY per lease (PEXPIRE once per window).
const LEASE_LUA = `
local v = redis.call('MGET', KEYS[1], KEYS[2])
local curr = tonumber(v[1]) or 0
local prev = tonumber(v[2]) or 0
local limit = tonumber(ARGV[1])
local want = tonumber(ARGV[2])
local free = limit - curr - math.ceil(prev * tonumber(ARGV[3]) / 1000000)
if free <= 0 then return {0, curr, prev} end
if want > free then want = free end
local n = redis.call('INCRBY', KEYS[1], want)
if n == want then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {want, n, prev}
`;

type LeaseClient = {
  chatRateLease(
    curr: string,
    prev: string,
    limit: number,
    want: number,
    restPpm: number,
    ttlMs: number,
  ): Promise<[number, number, number]>;
};

/** Slots this instance holds for one key in one fixed window. */
interface Lease {
  window: number;
  left: number;
  /** The size of the next lease: doubles while leases run out, halves when one expires unused. */
  size: number;
  pending: Promise<void> | null;
  /** Hits of this instance waiting for the pending lease: the next lease asks for at least as many. */
  waiting: number;
  /** The window pair's counts at the last refusal, for Retry-After. */
  refused: { window: number; curr: number; prev: number } | null;
}

/**
 * Redis implementation, shared by every instance: a sliding-window counter (two fixed windows, the
 * previous one weighted by how much of it the sliding window still covers) whose slots an instance
 * leases in blocks, so a steady sender costs Redis one lease per block instead of one call per send.
 * A lease is at most an eighth of the limit (one slot at a time for limits under 16, so small limits
 * are exact across instances) and lives until its window ends; slots an instance leased and did not use
 * count as used, which bounds what an instance can hold back from another by limit / 8.
 *
 * While Redis is away (not connected, or a lease fails) the instance counts on its own: each instance
 * then allows up to `limit` per window, and sends go on instead of failing with the limiter.
 */
export class RedisRateLimiter extends RateLimiter {
  private readonly client: LeaseClient;
  private readonly local = new MemoryRateLimiter();
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly redis: RedisService) {
    super();
    redis.client!.defineCommand('chatRateLease', { numberOfKeys: 2, lua: LEASE_LUA });
    this.client = redis.client as unknown as LeaseClient;
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    // not connected: no waiting in the offline queue for a connection that may take seconds
    if (!this.redis.ready) return this.local.hit(key, limit, windowMs);
    // each turn either takes a slot, waits for a lease (which grants or refuses), or answers a refusal;
    // only a refusal whose wait already passed turns again without progress, and only a few times
    for (let stale = 0; stale < 3;) {
      const now = Date.now();
      const window = Math.floor(now / windowMs);
      const lease = this.leaseOf(key, window);
      if (lease.left > 0) {
        lease.left--;
        return { allowed: true, retryAfterMs: 0 };
      }
      if (lease.refused?.window === window) {
        const wait = retryAfter(lease.refused, limit, windowMs, now);
        if (wait > 0) return { allowed: false, retryAfterMs: wait };
        lease.refused = null;
        stale++;
      }
      lease.waiting++;
      if (!lease.pending) lease.pending = this.renew(key, lease, limit, windowMs, now, window);
      try {
        await lease.pending;
      } catch {
        return this.local.hit(key, limit, windowMs);
      } finally {
        lease.waiting--;
      }
    }
    return { allowed: false, retryAfterMs: 1000 };
  }

  private leaseOf(key: string, window: number): Lease {
    let lease = this.leases.get(key);
    if (!lease) {
      if (this.leases.size >= MAX_LEASES) this.sweep(window);
      lease = { window, left: 0, size: 1, pending: null, waiting: 0, refused: null };
      this.leases.set(key, lease);
    } else if (lease.window !== window && !lease.pending) {
      if (lease.left > 0) lease.size = Math.max(1, lease.size >> 1);
      lease.window = window;
      lease.left = 0;
    }
    return lease;
  }

  private async renew(
    key: string,
    lease: Lease,
    limit: number,
    windowMs: number,
    now: number,
    window: number,
  ) {
    try {
      const want = Math.min(Math.max(lease.size, lease.waiting), Math.max(1, Math.floor(limit / 8)));
      const base = `${this.redis.prefix}rl:${key}:`;
      const restPpm = Math.round((1 - (now - window * windowMs) / windowMs) * 1_000_000);
      const [granted, curr, prev] = await this.client.chatRateLease(
        `${base}${window}`,
        `${base}${window - 1}`,
        limit,
        want,
        restPpm,
        windowMs * 2,
      );
      if (lease.window !== window) return; // the window turned while the lease was asked for: ask again
      if (granted > 0) {
        lease.left += granted;
        if (granted === want && want >= lease.size) lease.size = want * 2;
      } else {
        lease.refused = { window, curr, prev };
      }
    } finally {
      lease.pending = null;
    }
  }

  private sweep(window: number): void {
    for (const [k, l] of this.leases) if (l.window < window && !l.pending) this.leases.delete(k);
  }
}

/** Keys with a lease kept in memory before those of past windows are dropped. */
const MAX_LEASES = 10_000;

/**
 * Milliseconds until the sliding estimate leaves a slot: within this window once enough of the
 * previous one has slid out, else in the next window once enough of this one has.
 */
export function retryAfter(
  c: { window: number; curr: number; prev: number },
  limit: number,
  windowMs: number,
  now: number,
): number {
  const elapsed = now - c.window * windowMs;
  if (c.curr < limit) {
    // ceil(prev × (1 − t / W)) ≤ limit − 1 − curr
    const room = limit - 1 - c.curr;
    const at = c.prev > 0 ? windowMs * (1 - room / c.prev) : 0;
    return Math.max(0, Math.ceil(at - elapsed));
  }
  const at = windowMs + windowMs * (1 - (limit - 1) / c.curr);
  return Math.max(0, Math.ceil(at - elapsed));
}

export const rateLimiterProvider = {
  provide: RateLimiter,
  inject: [RedisService],
  useFactory: (redis: RedisService): RateLimiter =>
    redis.enabled ? new RedisRateLimiter(redis) : new MemoryRateLimiter(),
};
