import { Logger } from '@nestjs/common';
import type { JobData, JobName } from './job-map';
import { EnqueueOptions, JOB_ATTEMPTS, JOB_BACKOFF_MS, JobQueue, JobSpec } from './job-queue';
import { JobProcessor, processorMeta } from './job-processor';

interface Entry {
  name: JobName;
  jobId: string;
  data: unknown;
  attemptsMade: number;
}

interface Lane {
  handler?: (data: unknown) => Promise<void>;
  concurrency: number;
  running: number;
  waiting: Entry[];
}

/**
 * The queue of a single instance without Redis: delayed jobs are timers, each job name has its own
 * concurrency limit, and a job id is deduplicated while the job is delayed, waiting or running.
 * Nothing survives the process; callers keep their state in the database and re-enqueue on start.
 */
export class InProcessQueue extends JobQueue {
  readonly kind = 'in-process' as const;
  private readonly logger = new Logger('Queue');
  private readonly lanes = new Map<JobName, Lane>();
  private readonly live = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly idleWaiters: (() => void)[] = [];
  private closing = false;

  async add<N extends JobName>(name: N, data: JobData<N>, opts: EnqueueOptions): Promise<void> {
    if (this.closing) throw new Error('the queue is closed');
    const key = `${name}/${opts.jobId}`;
    if (this.live.has(key)) return;
    this.live.add(key);
    this.schedule({ name, jobId: key, data, attemptsMade: 0 }, opts.delayMs ?? 0);
  }

  async addBulk<N extends JobName>(name: N, jobs: JobSpec<N>[]): Promise<void> {
    for (const j of jobs) await this.add(name, j.data, j.opts);
  }

  consume<N extends JobName>(processor: JobProcessor<N>): void {
    const { name, concurrency } = processorMeta(processor);
    const lane = this.lane(name);
    lane.handler = (data) => processor.handle(data as JobData<N>);
    lane.concurrency = Math.max(1, concurrency);
    this.pump(lane);
  }

  skip(): void {
    // nothing was set up for it: its jobs, if any were added, wait in their lane
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const lane of this.lanes.values()) lane.waiting.length = 0;
    if ([...this.lanes.values()].some((l) => l.running > 0)) {
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  private lane(name: JobName): Lane {
    let lane = this.lanes.get(name);
    if (!lane) {
      lane = { concurrency: 1, running: 0, waiting: [] };
      this.lanes.set(name, lane);
    }
    return lane;
  }

  private schedule(entry: Entry, delayMs: number): void {
    if (delayMs <= 0) {
      this.enqueue(entry);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue(entry);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private enqueue(entry: Entry): void {
    if (this.closing) return;
    const lane = this.lane(entry.name);
    lane.waiting.push(entry);
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    while (lane.handler && !this.closing && lane.running < lane.concurrency && lane.waiting.length) {
      const entry = lane.waiting.shift()!;
      lane.running++;
      void this.run(lane, lane.handler, entry);
    }
  }

  private async run(lane: Lane, handler: (data: unknown) => Promise<void>, entry: Entry): Promise<void> {
    let retryIn: number | null = null;
    try {
      await handler(entry.data);
    } catch (err) {
      entry.attemptsMade++;
      if (entry.attemptsMade < JOB_ATTEMPTS && !this.closing) {
        retryIn = JOB_BACKOFF_MS * 2 ** (entry.attemptsMade - 1);
        this.logger.warn(
          `${entry.jobId} failed (attempt ${entry.attemptsMade}), retrying in ${retryIn} ms: ${String(err)}`,
        );
      } else {
        this.logger.error(
          `${entry.jobId} failed for good after ${entry.attemptsMade} attempts: ${String(err)}`,
        );
      }
    } finally {
      lane.running--;
      if (retryIn === null) this.live.delete(entry.jobId);
      else this.schedule(entry, retryIn);
      this.pump(lane);
      if (this.closing && [...this.lanes.values()].every((l) => l.running === 0)) {
        for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }
}
