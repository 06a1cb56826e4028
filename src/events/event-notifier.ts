import { BeforeApplicationShutdown, Injectable, OnModuleInit } from '@nestjs/common';
import { EventEmitter } from 'events';
import type Redis from 'ioredis';
import { DataSource, EntitySubscriberInterface, TransactionCommitEvent } from 'typeorm';
import { RedisService } from '../infra/redis/redis.module';

export const HAS_EVENTS = 'chat:hasEvents';

/**
 * Tells log readers (realtime, webhooks, push) that a transaction with events has committed, on this
 * instance at once and on the others through Redis. Readers also poll, so a lost nudge only costs latency.
 */
@Injectable()
export class EventNotifier implements EntitySubscriberInterface, OnModuleInit, BeforeApplicationShutdown {
  private readonly local = new EventEmitter();
  private sub?: Redis;

  constructor(
    private readonly db: DataSource,
    private readonly redis: RedisService,
  ) {
    this.local.setMaxListeners(50);
  }

  private get channel() {
    return `${this.redis.prefix}events:committed`;
  }

  onModuleInit(): void {
    this.db.subscribers.push(this);
    if (this.redis.enabled) {
      this.sub = this.redis.duplicate('events-sub');
      this.sub.subscribe(this.channel).catch(() => undefined);
      this.sub.on('message', () => this.local.emit('committed'));
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.local.removeAllListeners();
    await this.sub?.unsubscribe().catch(() => undefined);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const data = event.queryRunner.data as Record<string, unknown>;
    if (!data[HAS_EVENTS]) return;
    data[HAS_EVENTS] = false;
    this.committed();
  }

  /** Events have committed outside a TypeORM transaction (a single-statement write): tell the readers. */
  committed(): void {
    this.local.emit('committed');
    this.redis.client?.publish(this.channel, '1').catch(() => undefined);
  }

  onCommitted(listener: () => void): () => void {
    this.local.on('committed', listener);
    return () => this.local.off('committed', listener);
  }
}
