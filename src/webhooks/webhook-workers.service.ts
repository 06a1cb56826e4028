import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { QueueService } from '../infra/queue/queue.module';
import { Metrics } from '../ops/metrics';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor';
import { WebhookRelay } from './webhook-relay.service';
import { WebhookSweeper } from './webhook-sweeper.service';

const BACKLOG_CAP = 100_000;
const BACKLOG_READ_TIMEOUT_MS = 1_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs the delivery side (relay, queue consumer, sweeper) in the `all` and `worker` roles; an `api`
 * instance only writes events and enqueues manual retries. On shutdown the relay and sweeper stop
 * first; the queue then stops taking jobs and waits for attempts in flight (QueueService, before the
 * database closes).
 */
@Injectable()
export class WebhookWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('WebhookWorkers');
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly processor: WebhookDeliveryProcessor,
    private readonly relay: WebhookRelay,
    private readonly sweeper: WebhookSweeper,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.queue.consume(this.processor);
    this.relay.start();
    this.sweeper.start();
    // chat_webhook_backlog, read at scrape time where the deliveries are made; bounded so a database
    // that is slow to answer does not hold the scrape
    this.metrics.onScrape(async () => {
      const n = await withTimeout(this.deliveries.dueCount(BACKLOG_CAP), BACKLOG_READ_TIMEOUT_MS);
      this.metrics.webhookBacklog.set(n);
    });
    this.started = true;
    this.logger.log(`webhook delivery running on the ${this.queue.kind} queue`);
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.started) return;
    await Promise.all([this.relay.stop(), this.sweeper.stop()]);
  }
}
