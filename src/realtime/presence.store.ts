import { BeforeApplicationShutdown, Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { PresenceReader } from '../channels/presence-reader';
import { RedisService } from '../infra/redis/redis.module';

const HEARTBEAT_MS = 5_000;
const INSTANCE_TTL_MS = 15_000;

/**
 * Socket counts per user. Each instance keeps its own counts; with Redis it mirrors them in a hash of
 * its own and heartbeats its id in a sorted set, so a user is online while any live instance counts a
 * socket for them, and an instance that dies without cleaning up stops counting within 15 s.
 *
 * Counting is synchronous and local; the Redis mirror is written by `flush()` (the presence
 * coalescer calls it once per tick: one pipeline for every user that changed). A user whose last
 * socket closed is *held* (still counted online) until `release()`, so `last_seen_at` can be written
 * before anyone sees the user offline.
 */
@Injectable()
export class PresenceStore extends PresenceReader implements OnModuleInit, BeforeApplicationShutdown {
  readonly instanceId = randomUUID();
  private readonly local = new Map<string, number>();
  private readonly held = new Set<string>();
  private readonly dirty = new Set<string>();
  /** the heartbeat */
  private timer?: NodeJS.Timeout;

  constructor(private readonly redis: RedisService) {
    super();
  }

  private get instancesKey() {
    return `${this.redis.prefix}presence:instances`;
  }
  private countsKey(instance: string) {
    return `${this.redis.prefix}presence:i:${instance}`;
  }

  onModuleInit(): void {
    if (!this.redis.client) return;
    const beat = () => {
      const now = Date.now();
      this.redis.client
        ?.multi()
        .zadd(this.instancesKey, now, this.instanceId)
        .pexpire(this.countsKey(this.instanceId), INSTANCE_TTL_MS * 2)
        .zremrangebyscore(this.instancesKey, '-inf', now - INSTANCE_TTL_MS * 4)
        .exec()
        .catch(() => undefined);
    };
    beat();
    this.timer = setInterval(beat, HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Before Redis closes: this instance's counts go now rather than after the heartbeat expires. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.dirty.clear();
    await this.redis.client
      ?.multi()
      .zrem(this.instancesKey, this.instanceId)
      .del(this.countsKey(this.instanceId))
      .exec()
      .catch(() => undefined);
  }

  /** Counts a socket (at once here; in Redis on the next flush). */
  add(userId: string): void {
    this.local.set(userId, (this.local.get(userId) ?? 0) + 1);
    this.held.delete(userId);
    this.dirty.add(userId);
  }

  /** Uncounts a socket; the user's last one leaves the user held (still online) until `release`. */
  remove(userId: string): void {
    const n = (this.local.get(userId) ?? 0) - 1;
    if (n > 0) this.local.set(userId, n);
    else {
      this.local.delete(userId);
      this.held.add(userId);
    }
    this.dirty.add(userId);
  }

  /** Stops holding users without sockets here: they count as offline here from now on. */
  release(userIds: Iterable<string>): void {
    for (const u of userIds) {
      if (this.held.delete(u)) this.dirty.add(u);
    }
  }

  private countedHere(userId: string): boolean {
    return (this.local.get(userId) ?? 0) > 0 || this.held.has(userId);
  }

  /** Mirrors the counts that changed since the last flush into Redis: one pipeline. */
  async flush(): Promise<void> {
    const client = this.redis.client;
    if (!client) {
      this.dirty.clear();
      return;
    }
    if (!this.dirty.size) return;
    const users = [...this.dirty];
    this.dirty.clear();
    const key = this.countsKey(this.instanceId);
    const set: string[] = [];
    const del: string[] = [];
    for (const u of users) {
      const n = this.local.get(u) ?? (this.held.has(u) ? 1 : 0);
      if (n > 0) set.push(u, String(n));
      else del.push(u);
    }
    const pipe = client.pipeline();
    if (set.length) pipe.hset(key, ...set);
    if (del.length) pipe.hdel(key, ...del);
    try {
      const results = (await pipe.exec()) ?? [];
      if (results.some(([err]) => err)) throw new Error('presence flush failed');
    } catch {
      // Redis away: write these again next time (the values are absolute, so a repeat is harmless)
      for (const u of users) this.dirty.add(u);
    }
  }

  async onlineOf(userIds: string[]): Promise<Set<string>> {
    const online = new Set(userIds.filter((u) => this.countedHere(u)));
    const client = this.redis.client;
    if (!client || !userIds.length) return online;
    try {
      const instances = await client.zrangebyscore(this.instancesKey, Date.now() - INSTANCE_TTL_MS, '+inf');
      const others = instances.filter((i) => i !== this.instanceId);
      if (!others.length) return online;
      const pipe = client.pipeline();
      for (const i of others) pipe.hmget(this.countsKey(i), ...userIds);
      for (const [err, counts] of (await pipe.exec()) ?? []) {
        if (err) continue;
        (counts as (string | null)[]).forEach((c, idx) => {
          if (c && Number(c) > 0) online.add(userIds[idx]!);
        });
      }
    } catch {
      // Redis down: answer with what this instance knows
    }
    return online;
  }
}
