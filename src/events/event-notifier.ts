import { BeforeApplicationShutdown, Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { EventEmitter } from 'events';
import type Redis from 'ioredis';
import { DataSource, EntitySubscriberInterface, TransactionCommitEvent } from 'typeorm';
import { RedisService } from '../infra/redis/redis.module';

export const HAS_EVENTS = 'chat:hasEvents';

/**
 * Tells log readers (realtime, webhooks, push) that a transaction with events has committed, on this
 * instance at once and on the others through Redis. Readers also poll, so a lost nudge only costs latency.
 *
 * Nudges to the other instances are coalesced: while one PUBLISH is in flight, further commits only mark
 * that another is due, sent when it returns (so a nudge always follows the last commit). Under load that is
 * one PUBLISH per Redis round trip instead of one per send; an instance ignores its own nudges.
 */
@Injectable()
export class EventNotifier implements EntitySubscriberInterface, OnModuleInit, BeforeApplicationShutdown {
  private readonly local = new EventEmitter();
  private sub?: Redis;
  /** Tells this instance's nudges from the others'. */
  private readonly origin = randomUUID();
  private publishing = false;
  private due = false;

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
      this.sub.on('message', (_channel: string, from: string) => {
        if (from !== this.origin) this.local.emit('committed');
      });
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
    if (this.redis.client) this.publish(this.redis.client);
  }

  private publish(client: Redis): void {
    if (this.publishing) {
      this.due = true;
      return;
    }
    this.publishing = true;
    client
      .publish(this.channel, this.origin)
      .catch(() => undefined)
      .finally(() => {
        this.publishing = false;
        if (!this.due) return;
        this.due = false;
        this.publish(client);
      });
  }

  onCommitted(listener: () => void): () => void {
    this.local.on('committed', listener);
    return () => this.local.off('committed', listener);
  }
}
