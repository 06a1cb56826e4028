import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';

const EVERY_MS = 60 * 60 * 1000;
const BATCH = 5000;

/** Deletes events older than SERVICE_EVENT_RETENTION_DAYS, in small batches, once an hour. */
@Injectable()
export class EventRetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EventRetention');
  private timer?: NodeJS.Timeout;
  private first?: NodeJS.Timeout;

  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.timer = setInterval(() => void this.prune(), EVERY_MS);
    this.timer.unref();
    this.first = setTimeout(() => void this.prune(), 30_000);
    this.first.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.first) clearTimeout(this.first);
  }

  async prune(now = new Date()): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        const rows: { n: number }[] = await this.db.query(
          `WITH d AS (DELETE FROM events WHERE position IN (
              SELECT position FROM events WHERE created_at < $1::timestamptz - make_interval(days => $2) LIMIT $3)
            RETURNING 1) SELECT count(*)::int AS n FROM d`,
          [now.toISOString(), this.config.SERVICE_EVENT_RETENTION_DAYS, BATCH],
        );
        const n = rows[0]?.n ?? 0;
        total += n;
        if (n < BATCH) break;
      }
      if (total) this.logger.log(`pruned ${total} events`);
    } catch (e) {
      this.logger.warn(`prune failed: ${String(e)}`);
    }
    return total;
  }
}
