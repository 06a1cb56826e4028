import { BeforeApplicationShutdown, Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { EventEmitter } from 'events';
import type Redis from 'ioredis';
import { DataSource, EntitySubscriberInterface, TransactionCommitEvent } from 'typeorm';
import { RedisService } from '../infra/redis/redis.module';
import { fromWire, PublishLedger, PublishNote, toWire, WireNote } from './publish-notes';

export const HAS_EVENTS = 'chat:hasEvents';
/** A transaction's PublishNotes (queryRunner.data), told with its commit. */
export const PUBLISH_NOTES = 'chat:publishNotes';

/**
 * Tells log readers (realtime, webhooks, push) that a transaction with events has committed, on this
 * instance at once and on the others through Redis. Readers also poll, so a lost nudge only costs latency.
 *
 * Nudges to the other instances are coalesced: while one PUBLISH is in flight, further commits only mark
 * that another is due, sent when it returns (so a nudge always follows the last commit). Under load that is
 * one PUBLISH per Redis round trip instead of one per send; an instance ignores its own nudges.
 *
 * A nudge carries the commits' PublishNotes (which channel events their instance published live), into
 * every instance's PublishLedger: here at once, elsewhere with the next PUBLISH. The message is
 * `{"o": origin, "n": [WireNote…]}`; a bare origin (an older instance's nudge) is still understood.
 */
@Injectable()
export class EventNotifier implements EntitySubscriberInterface, OnModuleInit, BeforeApplicationShutdown {
  private readonly local = new EventEmitter();
  private sub?: Redis;
  /** Tells this instance's nudges from the others'. */
  private readonly origin = randomUUID();
  private publishing = false;
  private due = false;
  /** Notes not yet sent to the other instances. */
  private outbox: WireNote[] = [];

  constructor(
    private readonly db: DataSource,
    private readonly redis: RedisService,
    private readonly ledger: PublishLedger,
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
      this.sub.on('message', (_channel: string, message: string) => this.received(message));
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.local.removeAllListeners();
    await this.sub?.unsubscribe().catch(() => undefined);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const data = event.queryRunner.data as Record<string, unknown>;
    if (!data[HAS_EVENTS]) return;
    const notes = (data[PUBLISH_NOTES] as PublishNote[] | undefined) ?? [];
    data[HAS_EVENTS] = false;
    data[PUBLISH_NOTES] = undefined;
    this.committed(notes);
  }

  /** Events have committed outside a TypeORM transaction (a single-statement write): tell the readers. */
  committed(notes: readonly PublishNote[] = []): void {
    if (notes.length) {
      this.ledger.record(notes);
      if (this.redis.client) for (const n of notes) this.outbox.push(toWire(n));
    }
    this.local.emit('committed');
    if (this.redis.client) this.publish(this.redis.client);
  }

  private received(message: string): void {
    let from = message;
    if (message.startsWith('{')) {
      try {
        const m = JSON.parse(message) as { o?: unknown; n?: unknown };
        from = typeof m.o === 'string' ? m.o : '';
        if (from !== this.origin && Array.isArray(m.n)) {
          const notes = m.n.map(fromWire).filter((n): n is PublishNote => n !== null);
          if (notes.length) this.ledger.record(notes);
        }
      } catch {
        return;
      }
    }
    if (from !== this.origin) this.local.emit('committed');
  }

  private publish(client: Redis): void {
    if (this.publishing) {
      this.due = true;
      return;
    }
    this.publishing = true;
    const notes = this.outbox;
    this.outbox = [];
    client
      .publish(this.channel, notes.length ? JSON.stringify({ o: this.origin, n: notes }) : this.origin)
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
