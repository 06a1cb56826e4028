import { randomUUID } from 'crypto';
import type { RedisService } from '../infra/redis/redis.module';

const TTL_MS = 10_000;

/**
 * A Redis lease that makes one instance at a time the leader of a log reader that keeps its cursor in
 * memory (realtime publisher, push relay). Renewed every TTL/3; another instance takes over once it
 * has run out. Without Redis there is one instance, which always leads. Each instance (each app in a
 * process, too) has an owner id of its own.
 */
export class LeaderLease {
  private readonly owner = randomUUID();
  private timer?: NodeJS.Timeout;
  private leading = false;
  private renewing?: Promise<void>;

  constructor(
    private readonly redis: RedisService,
    private readonly key: string,
    /** Called when this instance starts or stops leading. */
    private readonly onChange: (leading: boolean) => void,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (this.timer) return;
    this.renewing = this.renew();
    this.timer = setInterval(() => {
      this.renewing = this.renew();
    }, TTL_MS / 3);
    this.timer.unref();
  }

  /** Stops renewing and gives the lease up (if held), so another instance can take over at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    const was = this.leading;
    this.set(false);
    if (was && this.redis.client) {
      await this.redis.client
        .eval(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`, 1, this.key, this.owner)
        .catch(() => undefined);
    }
  }

  private async renew(): Promise<void> {
    const client = this.redis.client;
    if (!client) return this.set(true);
    const ok = await client
      .eval(
        `local v = redis.call('get', KEYS[1])
         if v == false or v == ARGV[1] then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
         return 0`,
        1,
        this.key,
        this.owner,
        TTL_MS,
      )
      .catch(() => 0);
    if (this.timer) this.set(ok === 1);
  }

  private set(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.onChange(leading);
  }
}
