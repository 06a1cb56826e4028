import { Injectable, Logger } from '@nestjs/common';
import { Periodic } from '../common/periodic';
import { LeaderLease, Leadership } from '../infra/database/leadership';
import { QueueService } from '../infra/queue/queue.module';
import { ObjectStorage } from '../infra/storage/object-storage';
import { EXPORT_ATTEMPTS, EXPORT_JOB } from './export-build.processor';
import { ExportsRepository } from './exports.repository';

const SWEEP_EVERY_MS = 60_000;
/** The first sweep after start-up: re-enqueues what a restart of the in-process queue lost. */
const FIRST_SWEEP_MS = 5_000;
/** A pending export that no build holds and that has not moved for this long has lost its job. */
export const EXPORT_STALL_GRACE_MS = 60_000;
const SWEEP_BATCH = 100;

export interface SweepResult {
  deleted: number;
  requeued: number;
  failed: number;
}

/**
 * The exports' housekeeping, in the worker role, on one instance at a time (Leadership; embedded, the
 * one instance leads): deletes exports past their expiry (7 days after they became ready or
 * failed) and exports whose user was deleted, the stored object first and the row after it (an object
 * that cannot be deleted keeps its row, and is tried again next time); re-enqueues pending exports
 * whose job was lost, and fails those that ran out of attempts without finishing (a build that kept
 * dying with its process).
 */
@Injectable()
export class ExportSweeper {
  private readonly logger = new Logger('ExportSweeper');
  private readonly lease: LeaderLease;
  /** One instance sweeps at a time (the lease holder). */
  private readonly loop = new Periodic(
    SWEEP_EVERY_MS,
    () => (this.lease.isLeader ? this.sweep() : Promise.resolve()),
    FIRST_SWEEP_MS,
  );

  constructor(
    private readonly exports: ExportsRepository,
    private readonly storage: ObjectStorage,
    private readonly queue: QueueService,
    leadership: Leadership,
  ) {
    this.lease = leadership.lease('export-sweeper');
  }

  start(): void {
    this.lease.start();
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.lease.stop();
  }

  /** One pass (`now` moves the clock, for tests). Never throws: a failure is logged and retried next pass. */
  async sweep(now = new Date()): Promise<SweepResult> {
    const result: SweepResult = { deleted: 0, requeued: 0, failed: 0 };
    try {
      for (const e of await this.exports.due(now, SWEEP_BATCH)) {
        try {
          if (e.object_key) await this.storage.delete(e.object_key);
          await this.exports.remove(e.id);
          result.deleted++;
        } catch (err) {
          this.logger.warn(`could not delete export ${e.id}: ${String(err)}`);
        }
      }
      const stalled = await this.exports.stalled(now, EXPORT_STALL_GRACE_MS, SWEEP_BATCH);
      const retry = stalled.filter((e) => e.attempts < EXPORT_ATTEMPTS);
      for (const e of stalled.filter((s) => s.attempts >= EXPORT_ATTEMPTS)) {
        if (await this.exports.markFailed(e.id, `no build finished in ${e.attempts} attempts`))
          result.failed++;
      }
      if (retry.length) {
        await this.queue.addBulk(
          EXPORT_JOB,
          retry.map((e) => ({ data: { exportId: e.id }, opts: { jobId: e.id, revive: true } })),
        );
        result.requeued = retry.length;
      }
      if (result.deleted || result.requeued || result.failed)
        this.logger.log(
          `deleted ${result.deleted}, re-enqueued ${result.requeued}, failed ${result.failed} export(s)`,
        );
    } catch (err) {
      this.logger.warn(`sweep failed: ${String(err)}`);
    }
    return result;
  }
}
