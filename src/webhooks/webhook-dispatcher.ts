import { Injectable, Logger } from '@nestjs/common';
import { QueueService } from '../infra/queue/queue.module';

export interface DeliveryJob {
  deliveryId: string;
  /** The attempt number the job will make (attempts so far + 1). */
  attempt: number;
  delayMs?: number;
  /** A sweeper re-enqueue: replace a finished job kept under the same id. */
  revive?: boolean;
}

export const DELIVER_JOB = 'webhook.deliver' as const;

/** One id per (delivery, attempt number): enqueueing the same attempt twice is harmless. */
export function deliveryJobId(deliveryId: string, attempt: number): string {
  return `wh.${deliveryId}.${attempt}`;
}

/**
 * Puts delivery attempts on the queue, always after the transaction that made them due has committed.
 * When the queue refuses (Redis down), the jobs are kept here and retried on every relay tick, so
 * an outage delays deliveries but loses none; if the process dies meanwhile, the sweeper finds the
 * overdue rows.
 */
@Injectable()
export class WebhookDispatcher {
  private readonly logger = new Logger('WebhookDispatcher');
  /** jobId → job and when it is due (epoch ms). */
  private readonly backlog = new Map<string, { job: DeliveryJob; dueAt: number }>();
  private warned = false;

  constructor(private readonly queue: QueueService) {}

  get backlogSize(): number {
    return this.backlog.size;
  }

  async enqueue(jobs: DeliveryJob[]): Promise<void> {
    if (!jobs.length) return;
    try {
      await this.queue.addBulk(
        DELIVER_JOB,
        jobs.map((j) => ({
          data: { deliveryId: j.deliveryId, attempt: j.attempt },
          opts: { jobId: deliveryJobId(j.deliveryId, j.attempt), delayMs: j.delayMs, revive: j.revive },
        })),
      );
      if (this.warned && !this.backlog.size) {
        this.logger.log('the queue accepts jobs again');
        this.warned = false;
      }
    } catch (err) {
      const now = Date.now();
      for (const j of jobs)
        this.backlog.set(deliveryJobId(j.deliveryId, j.attempt), { job: j, dueAt: now + (j.delayMs ?? 0) });
      if (!this.warned) {
        this.logger.warn(
          `could not enqueue ${jobs.length} delivery job(s), keeping them for a retry: ${String(err)}`,
        );
        this.warned = true;
      }
    }
  }

  /** Retries what the queue refused earlier (the delay counts from when the job was first due). */
  async flushBacklog(): Promise<void> {
    if (!this.backlog.size) return;
    const now = Date.now();
    const entries = [...this.backlog.values()].slice(0, 500);
    for (const e of entries) this.backlog.delete(deliveryJobId(e.job.deliveryId, e.job.attempt));
    await this.enqueue(entries.map((e) => ({ ...e.job, delayMs: Math.max(0, e.dueAt - now) })));
  }
}
