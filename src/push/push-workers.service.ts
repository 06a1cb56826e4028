import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { PushGateway } from '../infra/push/push-gateway';
import { QueueService } from '../infra/queue/queue.module';
import { PushProcessor } from './push.processor';
import { PushRelay } from './push.relay';

/**
 * Runs push (relay + queue consumer) in the `all` and `worker` roles, and only when a service account
 * is configured. The relay stops first on shutdown; the queue then waits for jobs in flight.
 */
@Injectable()
export class PushWorkers implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('PushWorkers');
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateway: PushGateway,
    private readonly queue: QueueService,
    private readonly relay: PushRelay,
    private readonly processor: PushProcessor,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    if (!this.gateway.enabled) {
      this.queue.skip(this.processor);
      return;
    }
    this.queue.consume(this.processor);
    this.relay.start();
    this.started = true;
    this.logger.log(`push notifications running on the ${this.queue.kind} queue`);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.started) await this.relay.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gateway.close();
  }
}
