import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Periodic } from '../common/periodic';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';

/** Items fired per transaction; a source that fills a batch is asked again in the same pass. */
export const DUE_BATCH = 50;
/** Batches per source per pass, so that one busy kind never starves the others for long. */
const MAX_BATCHES_PER_PASS = 20;

/**
 * A kind of timed item (CONTRACT §25: reminders, scheduled messages, poll closing), kept as rows with
 * their due time in an index that holds only pending items.
 */
export interface DueSource {
  readonly name: string;
  /**
   * Fires at most `limit` items due now, oldest first, and answers how many. Each is claimed with
   * `FOR UPDATE SKIP LOCKED`, either in the transaction that fires it (a worker that dies mid-way rolls
   * its claim back) or as a lease that the firing transaction checks (a lease that runs out is claimed
   * again), so any number of workers fire every item exactly once.
   */
  fireDue(limit: number): Promise<number>;
}

/**
 * The one durable scheduler (CONTRACT §25). The database is the source of truth: nothing is held in
 * timers, so items that fell due while nothing ran fire at the first pass of a worker that starts.
 * Every worker (the `all` and `worker` roles; embedded, the one process) asks each source every
 * SERVICE_SCHEDULER_INTERVAL_MS: an idle pass is one index probe per source whatever the number of
 * pending items. A failing pass (the database gone) is logged and tried again at the next tick.
 */
@Injectable()
export class Scheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Scheduler');
  private readonly sources: DueSource[] = [];
  private readonly loop: Periodic;
  private started = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.loop = new Periodic(config.SERVICE_SCHEDULER_INTERVAL_MS, () => this.pass(), 0);
  }

  /** Called by each feature's module when it starts; sources fire in the order they registered. */
  register(source: DueSource): void {
    this.sources.push(source);
  }

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.started = true;
    this.loop.start();
    this.logger.log(
      `firing ${this.sources.map((s) => s.name).join(', ')} every ${this.config.SERVICE_SCHEDULER_INTERVAL_MS} ms`,
    );
  }

  async onModuleDestroy(): Promise<void> {
    if (this.started) await this.loop.stop();
  }

  /** One pass over every source; answers the items fired. */
  async pass(): Promise<number> {
    let fired = 0;
    for (const source of this.sources) {
      for (let i = 0; i < MAX_BATCHES_PER_PASS; i++) {
        let n: number;
        try {
          n = await source.fireDue(DUE_BATCH);
        } catch (err) {
          this.logger.warn(`${source.name}: ${String(err)}`);
          break;
        }
        fired += n;
        if (n < DUE_BATCH) break;
      }
    }
    return fired;
  }
}
