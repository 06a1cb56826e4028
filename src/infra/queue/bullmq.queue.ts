import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { JobProcessor, processorMeta } from './job-processor';
import type Redis from 'ioredis';
import type { JobData, JobName } from './job-map';
import { EnqueueOptions, JOB_ATTEMPTS, JOB_BACKOFF_MS, JobQueue, JobSpec } from './job-queue';

/** An add that Redis does not acknowledge in time counts as failed (the caller keeps it and retries). */
const ADD_TIMEOUT_MS = 3_000;

export interface BullMqConnections {
  /** Producer connection: commands fail fast while Redis is down. */
  producer: Redis;
  /** Key prefix, so deployments and test files sharing a Redis do not see each other's jobs. */
  prefix: string;
}

/**
 * The Redis-backed queue: one BullMQ queue per job name. Completed jobs are removed (their deterministic
 * id can then be used again); failed ones are kept for inspection. Consumers are `@nestjs/bullmq`
 * processors (`@ProcessesJob`): the Bull explorer builds their Workers on the shared worker
 * connection (QueueModule) and `consume` starts one. A worker that dies mid-job loses its lock and
 * BullMQ hands the job to another worker.
 */
export class BullMqQueue extends JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly logger = new Logger('Queue');
  private readonly queues = new Map<JobName, Queue>();
  private readonly workers: Worker[] = [];

  constructor(private readonly conn: BullMqConnections) {
    super();
  }

  async add<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void> {
    await this.addBulk(name, [{ data, opts }]);
  }

  async addBulk<N extends JobName>(name: N, jobs: JobSpec<N>[]): Promise<void> {
    if (!jobs.length) return;
    const queue = this.queue(name);
    const work = async () => {
      for (const j of jobs) {
        if (!j.opts.revive) continue;
        const state = await queue.getJobState(j.opts.jobId);
        if (state === 'completed' || state === 'failed') await queue.remove(j.opts.jobId);
      }
      await queue.addBulk(
        jobs.map((j) => ({
          name,
          data: j.data,
          opts: {
            jobId: j.opts.jobId,
            delay: Math.max(0, Math.round(j.opts.delayMs ?? 0)),
            attempts: JOB_ATTEMPTS,
            backoff: { type: 'exponential', delay: JOB_BACKOFF_MS },
            removeOnComplete: true,
            removeOnFail: { age: 7 * 86_400, count: 5_000 },
          },
        })),
      );
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        work(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`enqueue timed out after ${ADD_TIMEOUT_MS} ms`)),
            ADD_TIMEOUT_MS,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  consume<N extends JobName>(processor: JobProcessor<N>): void {
    const { name } = processorMeta(processor);
    const worker = processor.worker;
    worker.on('error', (err) => this.logger.warn(`worker ${name}: ${err.message}`));
    worker.on('failed', (job, err) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1))
        this.logger.error(`${name} ${job.id} failed for good: ${err.message}`);
    });
    this.workers.push(worker);
    // run() settles when the worker closes; an error that stops it is logged, never unhandled
    worker.run().catch((err: unknown) => this.logger.error(`worker ${name} stopped: ${String(err)}`));
  }

  skip<N extends JobName>(processor: JobProcessor<N>): void {
    // the explorer built its Worker (with a connection of its own): close it rather than leave it idle,
    // once its connections are up (closed while they connect, BullMQ left their rejected start
    // unhandled: a warning at every start of an instance with a skipped processor). It is never run:
    // what it reports meanwhile (Redis away) is of no use
    const worker = processor.worker;
    worker.on('error', () => undefined);
    worker
      .waitUntilReady()
      .catch(() => undefined)
      .then(() => worker.close())
      .catch((err: unknown) => this.logger.warn(`closing an unused worker: ${String(err)}`));
  }

  async close(): Promise<void> {
    // Worker.close waits for the jobs in progress
    await Promise.all(
      this.workers.map((w) =>
        w.close().catch((e: unknown) => this.logger.warn(`closing a worker: ${String(e)}`)),
      ),
    );
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
  }

  private queue(name: JobName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.conn.producer, prefix: this.conn.prefix });
      q.on('error', (err) => this.logger.warn(`queue ${name}: ${err.message}`));
      this.queues.set(name, q);
    }
    return q;
  }
}
