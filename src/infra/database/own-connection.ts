import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';

/** How long a statement on the instance's own connection may take before the connection is given up. */
export const OWN_CONNECTION_TIMEOUT_MS = 2_000;

/**
 * The instance's own connection to PostgreSQL, outside the pool, for what must not wait behind busy
 * requests (the /readyz probe) and for what lives as long as a session (the leaders' advisory locks,
 * Leadership). Made on first use and again after any failure. A failure (an error, a statement past
 * OWN_CONNECTION_TIMEOUT_MS, the server going away) ends the session, so every session lock it held
 * is released on the server at once, and `onLost` listeners hear of it. Only on PostgreSQL
 * (`available`); embedded there is one process and one connection.
 */
@Injectable()
export class OwnConnection implements BeforeApplicationShutdown {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private readonly lostListeners = new Set<() => void>();
  private closed = false;
  /** The last statement queued (settles when it has run). */
  private tail: Promise<unknown> = Promise.resolve();
  /** Counts the sessions lost (or not made): a statement queued in an earlier one fails. */
  private session = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get available(): boolean {
    return !!this.config.DATABASE_URL;
  }

  /** Calls `fn` whenever the session ends (its locks are gone); returns the unsubscribe. */
  onLost(fn: () => void): () => void {
    this.lostListeners.add(fn);
    return () => this.lostListeners.delete(fn);
  }

  /**
   * Runs one statement; statements run one after another (pg refuses a query issued while another is
   * running on the same client from pg 9 on, and warns about it today). As with pg's own queue, the
   * statements waiting when one fails (the session is gone, or could not be made) fail with it at once:
   * an unreachable server costs one connection timeout, not one per waiting statement.
   */
  query<T>(text: string, params?: unknown[]): Promise<T[]> {
    const session = this.session;
    const run = this.tail.then(() => {
      if (session !== this.session) throw new Error('the instance connection was lost');
      return this.run<T>(text, params);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async run<T>(text: string, params?: unknown[]): Promise<T[]> {
    let client: Client;
    try {
      client = await this.connect();
    } catch (e) {
      this.session++;
      throw e;
    }
    try {
      return (await client.query(text, params)).rows as T[];
    } catch (e) {
      this.drop(client);
      throw e;
    }
  }

  private connect(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the instance connection is closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new Client({
        connectionString: this.config.DATABASE_URL,
        application_name: 'chat-service-instance',
        connectionTimeoutMillis: OWN_CONNECTION_TIMEOUT_MS,
        query_timeout: OWN_CONNECTION_TIMEOUT_MS,
        keepAlive: true,
      });
      client.on('error', () => this.drop(client));
      client.on('end', () => this.drop(client));
      try {
        await client.connect();
      } catch (e) {
        client.end().catch(() => undefined);
        throw e;
      }
      if (this.closed) {
        client.end().catch(() => undefined);
        throw new Error('the instance connection is closed');
      }
      this.client = client;
      return client;
    })().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private drop(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.session++;
    client.end().catch(() => undefined);
    for (const fn of this.lostListeners) fn();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    if (client) {
      this.client = null;
      await client.end().catch(() => undefined);
    }
  }
}
