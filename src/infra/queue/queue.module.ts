import { BeforeApplicationShutdown, Global, Injectable, Module } from '@nestjs/common';
import { RedisService } from '../redis/redis.module';
import { BullMqQueue } from './bullmq.queue';
import { InProcessQueue } from './in-process.queue';
import type { JobData, JobName } from './job-map';
import { EnqueueOptions, JobHandler, JobQueue, JobSpec, ProcessOptions } from './job-queue';

/** The process's queue: BullMQ when Redis is configured, else in-process. Closed before the database. */
@Injectable()
export class QueueService extends JobQueue implements BeforeApplicationShutdown {
  private readonly impl: JobQueue;

  constructor(redis: RedisService) {
    super();
    this.impl = redis.enabled
      ? new BullMqQueue({
          producer: redis.duplicate('queue'),
          worker: (name) => redis.duplicate(`queue-worker:${name}`, { maxRetriesPerRequest: null }),
          prefix: `${redis.prefix}bull`,
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
