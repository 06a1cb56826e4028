import { Processor, WorkerHost } from '@nestjs/bullmq';
import { applyDecorators, SetMetadata } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { JobData, JobName } from './job-map';

const PROCESSES_JOB = 'chat:processes-job';

export interface ProcessesJobOptions {
  /** Jobs of this name run at once in one process. */
  concurrency: number;
}

interface ProcessorMeta extends ProcessesJobOptions {
  name: JobName;
}

/**
 * Declares the consumer of one job name. On Redis it is a `@nestjs/bullmq` processor: the Bull
 * explorer builds its Worker (on the shared worker connection, not started: `autorun: false`) and
 * `QueueService.consume` starts it in the roles that run background work. On the in-process queue the
 * same class handles the same payloads.
 */
export function ProcessesJob(name: JobName, opts: ProcessesJobOptions): ClassDecorator {
  return applyDecorators(
    Processor(name, {
      autorun: false,
      concurrency: opts.concurrency,
      // a worker that dies mid-job loses its lock within seconds and the job goes to another worker
      lockDuration: 15_000,
      stalledInterval: 10_000,
      maxStalledCount: 3,
    }),
    SetMetadata(PROCESSES_JOB, { name, ...opts } satisfies ProcessorMeta),
  );
}

/** A job consumer: `handle` gets the typed payload, whichever queue carries it. */
export abstract class JobProcessor<N extends JobName> extends WorkerHost {
  abstract handle(data: JobData<N>): Promise<void>;

  /** BullMQ's entry point. */
  process(job: Job<JobData<N>>): Promise<void> {
    return this.handle(job.data);
  }
}

/** The job name and concurrency `@ProcessesJob` gave the processor's class. */
export function processorMeta(p: JobProcessor<JobName>): ProcessorMeta {
  const meta = Reflect.getMetadata(PROCESSES_JOB, p.constructor) as ProcessorMeta | undefined;
  if (!meta) throw new Error(`${p.constructor.name} has no @ProcessesJob(...)`);
  return meta;
}
