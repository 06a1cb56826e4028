import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { QueueService } from '../infra/queue/queue.module';
import { ExportBuildProcessor } from './export-build.processor';
import { ExportSweeper } from './export-sweeper.service';

/**
 * Runs the export builds (queue consumer) and the sweeper in the `all` and `worker` roles, on the
 * process's queue: BullMQ when Redis is configured, in-process otherwise. On shutdown the builds in
 * progress stop at their next page (the export stays pending and is built again) and the sweeper
 * stops; the queue then waits for the jobs in flight.
 */
@Injectable()
export class ExportWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ExportWorkers');
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly processor: ExportBuildProcessor,
    private readonly sweeper: ExportSweeper,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.queue.consume(this.processor);
    this.sweeper.start();
    this.started = true;
    this.logger.log(`user exports running on the ${this.queue.kind} queue`);
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.started) return;
    this.processor.stop();
    await this.sweeper.stop();
  }
}
