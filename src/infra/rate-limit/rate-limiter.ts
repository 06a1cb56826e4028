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

// One round trip, atomic: drop old entries, count, add when under the limit.
const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local member = ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', key, now, member)
redis.call('PEXPIRE', key, window)
return {1, 0}
`;

type SlidingWindowClient = {
  chatSlidingWindow(key: string, now: number, windowMs: number, limit: number, member: string): Promise<[number, number]>;
};

/**
 * Redis implementation, shared by every instance. The script is defined once on the connection, so
 * each hit sends its SHA (EVALSHA), not its text; ioredis loads it again if Redis lost it (NOSCRIPT).
 * While Redis is away (not connected, or a hit fails) the instance counts on its own: each instance
 * then allows up to `limit` per window, and sends go on instead of failing with the limiter.
 */
export class RedisRateLimiter extends RateLimiter {
  private seq = 0;
  private readonly client: SlidingWindowClient;
  private readonly local = new MemoryRateLimiter();

  constructor(private readonly redis: RedisService) {
    super();
    redis.client!.defineCommand('chatSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
    this.client = redis.client as unknown as SlidingWindowClient;
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    // not connected: no waiting in the offline queue for a connection that may take seconds
    if (!this.redis.ready) return this.local.hit(key, limit, windowMs);
    const now = Date.now();
    const member = `${now}:${process.pid}:${++this.seq}:${Math.random().toString(36).slice(2, 8)}`;
    try {
      const [ok, wait] = await this.client.chatSlidingWindow(`${this.redis.prefix}rl:${key}`, now, windowMs, limit, member);
      return { allowed: ok === 1, retryAfterMs: Math.max(0, wait) };
    } catch {
      return this.local.hit(key, limit, windowMs);
    }
  }
}

export const rateLimiterProvider = {
  provide: RateLimiter,
  inject: [RedisService],
  useFactory: (redis: RedisService): RateLimiter => (redis.enabled ? new RedisRateLimiter(redis) : new MemoryRateLimiter()),
};
