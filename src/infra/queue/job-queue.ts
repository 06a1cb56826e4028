import type { JobData, JobName } from './job-map';
import type { JobProcessor } from './job-processor';

export interface EnqueueOptions {
  /** Deterministic id: adding a job whose id is already waiting, delayed or running does nothing. */
  jobId: string;
  delayMs?: number;
  /** Also replace a finished job kept under the same id (a re-enqueue by a sweeper). */
  revive?: boolean;
}

export interface JobSpec<N extends JobName> {
  data: JobData<N>;
  opts: EnqueueOptions;
}

/**
 * A typed background queue. Two implementations: BullMQ when REDIS_URL is set (jobs survive a
 * restart and are shared by every worker instance) and an in-process one otherwise. A handler that
 * throws is retried a few times with backoff; handlers must therefore be idempotent.
 */
export abstract class JobQueue {
  abstract readonly kind: 'bullmq' | 'in-process';

  abstract add<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void>;

  abstract addBulk<N extends JobName>(name: N, jobs: JobSpec<N>[]): Promise<void>;

  /** Starts consuming the processor's job name in this process (its `@ProcessesJob` concurrency). */
  abstract consume<N extends JobName>(processor: JobProcessor<N>): void;

  /** This process will not consume the processor's job (e.g. push without FCM credentials). */
  abstract skip<N extends JobName>(processor: JobProcessor<N>): void;

  /** Stops taking jobs and waits for the running ones to finish. */
  abstract close(): Promise<void>;
}

/** Attempts of a job whose handler throws (the handler's own retries, e.g. webhook schedules, are separate). */
export const JOB_ATTEMPTS = 5;
export const JOB_BACKOFF_MS = 1_000;
