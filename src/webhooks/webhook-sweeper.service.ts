import { Injectable, Logger } from '@nestjs/common';
import { Periodic } from '../common/periodic';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDispatcher } from './webhook-dispatcher';

const SWEEP_EVERY_MS = 5_000;
/** A pending delivery overdue by more than this, and not leased, has lost its job. */
export const SWEEP_GRACE_MS = 10_000;
const SWEEP_BATCH = 500;

/**
 * The safety net of the delivery pipeline: a delivery is a row first and a job second, so a job lost to
 * a Redis outage or a dead process shows up as a pending row past its due time with no lease. This
 * re-enqueues such rows under their deterministic job id (reviving a finished job of the same id).
 */
@Injectable()
export class WebhookSweeper {
  private readonly logger = new Logger('WebhookSweeper');
  private readonly loop = new Periodic(SWEEP_EVERY_MS, () => this.sweep());

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Returns how many deliveries were re-enqueued. */
  async sweep(graceMs = SWEEP_GRACE_MS): Promise<number> {
    try {
      const due = await this.deliveries.overdue(graceMs, SWEEP_BATCH);
      if (due.length) {
        this.logger.log(`re-enqueueing ${due.length} overdue delivery(ies)`);
        await this.dispatcher.enqueue(
          due.map((d) => ({ deliveryId: d.id, attempt: d.attempts + 1, revive: true })),
        );
      }
      return due.length;
    } catch (err) {
      this.logger.warn(`sweep failed: ${String(err)}`);
      return 0;
    }
  }
}
