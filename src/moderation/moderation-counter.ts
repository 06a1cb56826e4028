import { RedisService } from '../infra/redis/redis.module';

/**
 * Sliding-window counters for the `flood` rule (repeats of one text) and `auto_mute` (violations),
 * shared by every instance through Redis when it is configured, in-process otherwise.
 */
export abstract class ModerationCounter {
  /**
   * Records one hit of `key` now and answers how many hits it has had within the last `windowMs`, this
   * one included. With `resetAt`, the hit that brings the count to `resetAt` also clears the key, so
   * concurrent hits see that threshold crossed exactly once.
   */
  abstract hit(key: string, windowMs: number, resetAt?: number): Promise<number>;
}

/** The embedded default: one instance, counts in memory. */
export class MemoryModerationCounter extends ModerationCounter {
  private readonly logs = new Map<string, { times: number[]; windowMs: number }>();
  private hits = 0;

  async hit(key: string, windowMs: number, resetAt = 0): Promise<number> {
    const now = Date.now();
    if (++this.hits % 1000 === 0) this.sweep(now);
    const times = (this.logs.get(key)?.times ?? []).filter((t) => t > now - windowMs);
    times.push(now);
    if (resetAt > 0 && times.length >= resetAt) this.logs.delete(key);
    else this.logs.set(key, { times, windowMs });
    return times.length;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.logs) {
      if (!log.times.some((t) => t > now - log.windowMs)) this.logs.delete(key);
    }
  }
}

// One round trip, atomic: drop expired hits, add this one, count, then either clear (threshold) or expire.
const HIT_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local resetAt = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
redis.call('ZADD', key, now, ARGV[4])
local count = redis.call('ZCARD', key)
if resetAt > 0 and count >= resetAt then
  redis.call('DEL', key)
else
  redis.call('PEXPIRE', key, window)
end
return count
`;

/**
 * Shared by every instance through Redis. While Redis is away (not connected, or a hit fails) the
 * instance counts on its own, so the rules keep applying (per instance) and sends go on.
 */
export class RedisModerationCounter extends ModerationCounter {
  private seq = 0;
  private readonly local = new MemoryModerationCounter();

  constructor(private readonly redis: RedisService) {
    super();
  }

  async hit(key: string, windowMs: number, resetAt = 0): Promise<number> {
    if (!this.redis.ready) return this.local.hit(key, windowMs, resetAt);
    const now = Date.now();
    const member = `${now}:${process.pid}:${++this.seq}:${Math.random().toString(36).slice(2, 8)}`;
    try {
      return Number(
        await this.redis.client!.eval(
          HIT_LUA,
          1,
          `${this.redis.prefix}mod:${key}`,
          now,
          windowMs,
          resetAt,
          member,
        ),
      );
    } catch {
      return this.local.hit(key, windowMs, resetAt);
    }
  }
}

export const moderationCounterProvider = {
  provide: ModerationCounter,
  inject: [RedisService],
  useFactory: (redis: RedisService): ModerationCounter =>
    redis.enabled ? new RedisModerationCounter(redis) : new MemoryModerationCounter(),
};
