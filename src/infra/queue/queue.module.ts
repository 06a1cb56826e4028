import { BullModule } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, DynamicModule, Global, Inject, Injectable, Module } from '@nestjs/common';
import { createHash } from 'crypto';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { RedisService } from '../redis/redis.module';
import { BullMqQueue } from './bullmq.queue';
import { InProcessQueue } from './in-process.queue';
import type { JobData, JobName } from './job-map';
import type { JobProcessor } from './job-processor';
import { EnqueueOptions, JobQueue, JobSpec } from './job-queue';

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

  consume<N extends JobName>(processor: JobProcessor<N>): void {
    this.impl.consume(processor);
  }

  skip<N extends JobName>(processor: JobProcessor<N>): void {
    this.impl.skip(processor);
  }

  close(): Promise<void> {
    return this.impl.close();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/**
 * The queue for every module (global). With Redis, in the roles that run background work, it also
 * sets up `@nestjs/bullmq`: one worker connection (maxRetriesPerRequest: null, as BullMQ requires)
 * shared by the processors' Workers, under the same key prefix as the producers. Producers keep their
 * own fail-fast connection (BullMqQueue), so an enqueue while Redis is away fails in seconds and the
 * caller's retry path takes over instead of waiting.
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(config: AppConfig): DynamicModule {
    const bull =
      config.REDIS_URL && config.SERVICE_ROLE !== 'api'
        ? [
            BullModule.forRootAsync({
              inject: [RedisService],
              useFactory: (redis: RedisService) => ({
                connection: redis.duplicate('queue-worker', { maxRetriesPerRequest: null }),
                prefix: queuePrefix(redis.prefix, config.DATABASE_URL),
              }),
            }),
            BullModule.registerQueue(), // no queue providers: it brings the explorer that builds the Workers
          ]
        : [];
    return {
      module: QueueModule,
      imports: bull,
      providers: [QueueService, { provide: JobQueue, useExisting: QueueService }],
      exports: [QueueService, JobQueue],
    };
  }
}
