import { Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { FanoutLink } from './fanout-link';

/**
 * A lost connection is tried again at most this long apart: realtime across instances resumes within
 * about this much of Redis answering again (issue 29: the outage's backlog out within 2 s).
 */
export const RECONNECT_MAX_MS = 500;

/** Per connection: retries of a command across reconnects (null: until it is answered), a deadline for an answer. */
interface ConnectionOptions {
  maxRetriesPerRequest?: number | null;
  commandTimeout?: number;
}

/**
 * The optional Redis connection. `client` is null on the embedded default: features pick their
 * in-process implementation then (rate limiter, presence, queue, Socket.IO adapter).
 */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  readonly client: Redis | null;
  /** Key prefix so several deployments (or test files) can share one Redis. */
  readonly prefix: string;
  private readonly logger = new Logger('Redis');
  private readonly extra: Redis[] = [];
  /** The Socket.IO adapter's connections, as the realtime publisher watches them (empty without Redis). */
  readonly fanout = new FanoutLink();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.prefix = config.SERVICE_REDIS_PREFIX;
    this.client = config.REDIS_URL ? this.connect('main') : null;
  }

  get enabled(): boolean {
    return this.client !== null;
  }

  /** The main connection is up: a command now is answered, not queued until Redis comes back. */
  get ready(): boolean {
    return this.client?.status === 'ready';
  }

  /** A further connection (subscribers and blocking commands need their own). */
  duplicate(name: string, options: ConnectionOptions = {}): Redis {
    if (!this.config.REDIS_URL) throw new Error('Redis is not configured');
    const conn = this.connect(name, options);
    this.extra.push(conn);
    return conn;
  }

  async ping(): Promise<boolean> {
    if (!this.client) return true;
    try {
      return (
        (await Promise.race([
          this.client.ping(),
          new Promise<string>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000)),
        ])) === 'PONG'
      );
    } catch {
      return false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const conns = [this.client, ...this.extra].filter((c): c is Redis => c !== null);
    await Promise.all(conns.map((c) => c.quit().catch(() => c.disconnect())));
  }

  private connect(name: string, options: ConnectionOptions = {}): Redis {
    const conn = new Redis(this.config.REDIS_URL!, {
      connectionName: `chat-service:${name}`,
      maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 2 : options.maxRetriesPerRequest,
      enableOfflineQueue: true,
      ...(options.commandTimeout ? { commandTimeout: options.commandTimeout } : {}),
      retryStrategy: (times) => Math.min(times * 100, RECONNECT_MAX_MS),
    });
    let down = false;
    conn.on('error', (err: Error) => {
      if (!down) this.logger.warn(`${name}: ${err.message}`);
      down = true;
    });
    conn.on('ready', () => {
      if (down) this.logger.log(`${name}: reconnected`);
      down = false;
    });
    return conn;
  }
}

@Global()
@Module({ providers: [RedisService], exports: [RedisService] })
export class RedisModule {}
