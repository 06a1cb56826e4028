import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';

/** How long /readyz waits for the database's answer. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Whether the database answers, for /readyz. On PostgreSQL it asks over a connection of its own, so a
 * pool drained by busy requests (overload, which the instance sheds itself) is not reported as a
 * database that is down and makes no load balancer pull the instance. The connection is made on the
 * first probe and again after any failure. Embedded, the one PGlite connection answers, within the same bound.
 */
@Injectable()
export class DatabaseProbe implements BeforeApplicationShutdown {
  private client: Client | null = null;

  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async up(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.ask(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async ask(): Promise<boolean> {
    if (!this.config.DATABASE_URL) {
      return this.db.query('SELECT 1').then(
        () => true,
        () => false,
      );
    }
    try {
      if (!this.client) {
        const client = new Client({
          connectionString: this.config.DATABASE_URL,
          application_name: 'chat-service-probe',
          connectionTimeoutMillis: PROBE_TIMEOUT_MS,
          query_timeout: PROBE_TIMEOUT_MS,
        });
        client.on('error', () => this.drop(client));
        this.client = client;
        await client.connect();
      }
      await this.client.query('SELECT 1');
      return true;
    } catch {
      if (this.client) this.drop(this.client);
      return false;
    }
  }

  private drop(client: Client): void {
    if (this.client === client) this.client = null;
    client.end().catch(() => undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.client) this.drop(this.client);
  }
}
