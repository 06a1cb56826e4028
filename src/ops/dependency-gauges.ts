import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RedisService } from '../infra/redis/redis.module';
import { Metrics } from './metrics';

/** node-postgres's pool counters (TypeORM's postgres driver keeps the pool in `master`). */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The database pool (chat_db_pool_connections) and Redis (chat_redis_up), read when /metrics is
 * scraped: no work between scrapes, nothing asked of the database or Redis. Embedded, the pool is
 * PGlite's one shared connection (max 1): in use or idle, and the queries waiting for it.
 */
@Injectable()
export class DependencyGauges implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly db: DataSource,
    private readonly redis: RedisService,
  ) {}

  onModuleInit(): void {
    this.metrics.onScrape(() => this.read());
  }

  private read(): void {
    const pool = (this.db.driver as unknown as { master?: Partial<PoolCounts> }).master;
    if (pool && typeof pool.totalCount === 'number') {
      const idle = pool.idleCount ?? 0;
      this.metrics.dbPool.set({ state: 'in_use' }, Math.max(0, pool.totalCount - idle));
      this.metrics.dbPool.set({ state: 'idle' }, idle);
      this.metrics.dbPool.set({ state: 'waiting' }, pool.waitingCount ?? 0);
    }
    this.metrics.redisUp.set(!this.redis.enabled || this.redis.ready ? 1 : 0);
  }
}
