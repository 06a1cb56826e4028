import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { QueueService } from '../infra/queue/queue.module';
import { ErasureProcessor } from './erasure.processor';
import { ErasureSweeper } from './erasure-sweeper.service';

/**
 * Runs the `user.erase` jobs (queue consumer) and the sweeper in the `all` and `worker` roles, on the
 * process's queue: BullMQ when Redis is configured, in-process otherwise. On shutdown the job in
 * progress stops at its next batch (the erasure stays pending and resumes from it) and the sweeper
 * stops; the queue then waits for the job in flight.
 */
@Injectable()
export class ErasureWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ErasureWorkers');
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly processor: ErasureProcessor,
    private readonly sweeper: ErasureSweeper,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.queue.consume(this.processor);
    this.sweeper.start();
    this.started = true;
    this.logger.log(`user erasures running on the ${this.queue.kind} queue`);
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.started) return;
    this.processor.stop();
    await this.sweeper.stop();
  }
}
