import { Injectable, Logger } from '@nestjs/common';
import { Periodic } from '../common/periodic';
import { ErasureRepository } from './erasure.repository';
import { ErasureService } from './erasure.service';

const SWEEP_EVERY_MS = 15_000;
/** A pending erasure that no batch advanced for this long has lost its job (a batch takes well under a second). */
export const ERASURE_STALL_MS = 60_000;
const SWEEP_BATCH = 100;

/**
 * The erasures' safety net: an erasure is a row first and a job second, so a job lost with an
 * in-process queue at a restart, refused by Redis, or failed for good shows up as a pending row that
 * stopped advancing. This re-enqueues such rows under their job id (reviving a finished job of that id).
 */
@Injectable()
export class ErasureSweeper {
  private readonly logger = new Logger('ErasureSweeper');
  private readonly loop = new Periodic(SWEEP_EVERY_MS, () => this.sweep());

  constructor(
    private readonly repo: ErasureRepository,
    private readonly erasures: ErasureService,
  ) {}

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Returns how many erasures were re-enqueued. */
  async sweep(graceMs = ERASURE_STALL_MS): Promise<number> {
    try {
      const ids = await this.repo.stalled(graceMs, SWEEP_BATCH);
      if (ids.length) this.logger.log(`re-enqueueing ${ids.length} stalled erasure(s)`);
      for (const id of ids) await this.erasures.enqueue(id, true);
      return ids.length;
    } catch (err) {
      this.logger.warn(`sweep failed: ${String(err)}`);
      return 0;
    }
  }
}
