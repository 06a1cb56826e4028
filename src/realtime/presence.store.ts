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
 */
@Injectable()
export class PresenceStore extends PresenceReader implements OnModuleInit, BeforeApplicationShutdown {
  readonly instanceId = randomUUID();
  private readonly local = new Map<string, number>();
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
    await this.redis.client
      ?.multi()
      .zrem(this.instancesKey, this.instanceId)
      .del(this.countsKey(this.instanceId))
      .exec()
      .catch(() => undefined);
  }

  /** Counts a socket; true when this made the user online on this instance. */
  async connected(userId: string): Promise<boolean> {
    const n = (this.local.get(userId) ?? 0) + 1;
    this.local.set(userId, n);
    await this.redis.client?.hincrby(this.countsKey(this.instanceId), userId, 1).catch(() => undefined);
    return n === 1;
  }

  /** Sockets this instance counts for the user. */
  localCount(userId: string): number {
    return this.local.get(userId) ?? 0;
  }

  /** Uncounts a socket; true when the user has no socket left on this instance. */
  async disconnected(userId: string): Promise<boolean> {
    const n = Math.max(0, (this.local.get(userId) ?? 0) - 1);
    if (n === 0) this.local.delete(userId);
    else this.local.set(userId, n);
    if (this.redis.client) {
      const key = this.countsKey(this.instanceId);
      await (n === 0 ? this.redis.client.hdel(key, userId) : this.redis.client.hincrby(key, userId, -1)).catch(() => undefined);
    }
    return n === 0;
  }

  async onlineOf(userIds: string[]): Promise<Set<string>> {
    const online = new Set(userIds.filter((u) => (this.local.get(u) ?? 0) > 0));
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
