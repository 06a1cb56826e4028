import { randomUUID } from 'crypto';
import type { AppConfig } from '../../src/config/config.schema';
import { RedisRateLimiter, retryAfter } from '../../src/infra/rate-limit/rate-limiter';
import { RedisService } from '../../src/infra/redis/redis.module';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The shared send limit on real Redis, as two instances see it: each instance is a RedisRateLimiter on
 * its own connection. Leases make a steady sender cheap for Redis; small limits stay exact across
 * instances, and no burst of concurrent sends gets past the limit.
 */
describe('RedisRateLimiter (Redis)', () => {
  const services: RedisService[] = [];
  const instance = () => {
    const redis = new RedisService({ REDIS_URL: process.env.REDIS_URL } as AppConfig);
    services.push(redis);
    return { redis, limiter: new RedisRateLimiter(redis) };
  };
  let one: ReturnType<typeof instance>;
  let two: ReturnType<typeof instance>;

  beforeAll(async () => {
    one = instance();
    two = instance();
    for (const s of services) for (let i = 0; i < 100 && !s.ready; i++) await sleep(20);
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.onApplicationShutdown()));
  });

  /** Counts the leases an instance asks Redis for; every call still goes to Redis. */
  function countLeases(redis: RedisService): { calls: number } {
    const counter = { calls: 0 };
    const client = redis.client as unknown as { chatRateLease: (...a: unknown[]) => Promise<unknown> };
    const lease = client.chatRateLease.bind(client);
    client.chatRateLease = (...a: unknown[]) => {
      counter.calls++;
      return lease(...a);
    };
    return counter;
  }

  it('a limit of 5 spread over two instances: 5 sends pass, the 6th is refused with a wait within the window', async () => {
    const key = `send:${randomUUID()}`;
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await [one, two][i % 2]!.limiter.hit(key, 5, 60_000));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions[5]!.retryAfterMs).toBeGreaterThan(0);
    expect(decisions[5]!.retryAfterMs).toBeLessThanOrEqual(120_000);
    // the other instance refuses too
    expect((await one.limiter.hit(key, 5, 60_000)).allowed).toBe(false);
  });

  it('200 concurrent sends over two instances against a limit of 40: exactly 40 pass', async () => {
    const key = `send:${randomUUID()}`;
    const all = await Promise.all(
      Array.from({ length: 200 }, (_, i) => [one, two][i % 2]!.limiter.hit(key, 40, 60_000)),
    );
    expect(all.filter((d) => d.allowed)).toHaveLength(40);
    expect(all.filter((d) => !d.allowed).every((d) => d.retryAfterMs > 0)).toBe(true);
  });

  it('a steady sender under a high limit costs Redis a lease per block, not a call per send', async () => {
    const key = `send:${randomUUID()}`;
    const leases = countLeases(one.redis);
    for (let i = 0; i < 2000; i++) expect((await one.limiter.hit(key, 100_000, 60_000)).allowed).toBe(true);
    // doubling blocks from 1: about log2(2000) leases, two more if a window turned meanwhile
    expect(leases.calls).toBeLessThanOrEqual(30);
    expect(leases.calls).toBeGreaterThan(0);
  });

  it('the wait it answers is the wait: after it a slot is free, and the limit holds again after that', async () => {
    const key = `send:${randomUUID()}`;
    const windowMs = 1500;
    let passed = 0;
    let refusal = null;
    while (!refusal) {
      const d = await two.limiter.hit(key, 3, windowMs);
      if (d.allowed) passed++;
      else refusal = d;
    }
    expect(passed).toBe(3);
    await sleep(refusal.retryAfterMs + 20);
    expect((await one.limiter.hit(key, 3, windowMs)).allowed).toBe(true);
  });

  it('retryAfter: within the window once the previous one slid out enough, else in the next', () => {
    // 60 s windows, 30 s into window 10: limit 10, 4 sent now, 12 sent in the previous window
    // ceil(12 × (1 − t/60 s)) ≤ 5 once t ≥ 35 s: 5 s from now
    expect(retryAfter({ window: 10, curr: 4, prev: 12 }, 10, 60_000, 630_000)).toBe(5_000);
    // the current window is full: in the next, ceil(10 × (1 − t/60 s)) ≤ 9 once t ≥ 6 s: 36 s from now
    expect(retryAfter({ window: 10, curr: 10, prev: 0 }, 10, 60_000, 630_000)).toBe(36_000);
  });
});
