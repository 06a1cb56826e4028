import { BeforeApplicationShutdown, Global, Inject, Injectable, Module } from '@nestjs/common';
import { createHash } from 'crypto';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { RedisService } from '../redis/redis.module';
import { BullMqQueue } from './bullmq.queue';
import { InProcessQueue } from './in-process.queue';
import type { JobData, JobName } from './job-map';
import { EnqueueOptions, JobHandler, JobQueue, JobSpec, ProcessOptions } from './job-queue';

/**
 * Jobs name rows of one database, so the queue's keys are namespaced by it too: deployments (or test
 * runs) that share a Redis without distinct prefixes then never consume each other's jobs.
 */
export function queuePrefix(redisPrefix: string, databaseUrl: string | undefined): string {
  if (!databaseUrl) return `${redisPrefix}bull`;
  const u = new URL(databaseUrl);
  const db = createHash('sha256')
    .update(`${u.hostname}:${u.port || '5432'}${u.pathname}`)
    .digest('hex')
    .slice(0, 10);
  return `${redisPrefix}bull:${db}`;
}

/** The process's queue: BullMQ when Redis is configured, else in-process. Closed before the database. */
@Injectable()
export class QueueService extends JobQueue implements BeforeApplicationShutdown {
  private readonly impl: JobQueue;

  constructor(redis: RedisService, @Inject(APP_CONFIG) config: AppConfig) {
    super();
    this.impl = redis.enabled
      ? new BullMqQueue({
          producer: redis.duplicate('queue'),
          worker: (name) => redis.duplicate(`queue-worker:${name}`, { maxRetriesPerRequest: null }),
          prefix: queuePrefix(redis.prefix, config.DATABASE_URL),
        })
      : new InProcessQueue();
  }

  get kind() {
    return this.impl.kind;
  }

  add<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void> {
    return this.impl.add(name, data, opts);
  }

  addBulk<N extends JobName>(name: N, jobs: JobSpec<N>[]): Promise<void> {
    return this.impl.addBulk(name, jobs);
  }

  process<N extends JobName>(name: N, handler: JobHandler<N>, opts: ProcessOptions): void {
    this.impl.process(name, handler, opts);
  }

  close(): Promise<void> {
    return this.impl.close();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

@Global()
@Module({
  providers: [QueueService, { provide: JobQueue, useExisting: QueueService }],
  exports: [QueueService, JobQueue],
})
export class QueueModule {}
