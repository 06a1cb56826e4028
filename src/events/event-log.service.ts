import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { rows } from '../infra/database/sql';
import { activeTraceparent } from '../ops/tracing/tracing';
import { HAS_EVENTS } from './event-notifier';
import { isChannelOrdered } from './channel-order';
import { NewEvent, StoredEvent } from './event-types';
import type { DomainEventType } from '../contract/events';

/** A workspace event: no channel, no seq (user.created, message.moderated, …). */
export type WorkspaceEvent<T extends DomainEventType = DomainEventType> = Omit<NewEvent<T>, 'channelId'>;

/** A channel event: takes the channel's next contiguous `seq`. */
export type ChannelEvent<T extends DomainEventType = DomainEventType> = NewEvent<T> & { channelId: string };

/**
 * The transactional outbox. Events are written with the manager of the transaction that makes the
 * change, so they commit (or roll back) with it. Channel events are written only through a
 * ChannelWriteSession (src/channels/writes/channel-write-session.ts), which holds the channel's order lock, so the
 * `seq` is contiguous per channel and follows commit order. Traced, each keeps the writing span's
 * traceparent (the followers' spans link to it).
 */
@Injectable()
export class EventLogService {
  async append<T extends DomainEventType>(
    manager: EntityManager,
    event: WorkspaceEvent<T>,
  ): Promise<StoredEvent> {
    return this.insert(manager, event, null, null);
  }

  /** For ChannelWriteSession only: refuses a channel whose writes the transaction has not ordered. */
  async appendToChannel<T extends DomainEventType>(
    manager: EntityManager,
    event: ChannelEvent<T>,
  ): Promise<StoredEvent> {
    if (!isChannelOrdered(manager, event.channelId)) {
      throw new Error(`channel event ${event.type} written without the channel's order lock`);
    }
    const updated = await rows<{ last_seq: number }>(
      manager,
      `UPDATE channels SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq`,
      [event.channelId],
    );
    const row = updated[0];
    if (!row) throw new Error(`event for unknown channel ${event.channelId}`);
    return this.insert(manager, event, event.channelId, row.last_seq);
  }

  /**
   * For ChannelWriteSession only: several events of one channel in one statement, taking the next seqs
   * in their order (a batch of an erasure: hundreds of `message.deleted` in one transaction).
   */
  async appendManyToChannel(
    manager: EntityManager,
    workspaceId: string,
    channelId: string,
    events: { type: DomainEventType; payload: unknown }[],
  ): Promise<void> {
    if (!events.length) return;
    if (!isChannelOrdered(manager, channelId)) {
      throw new Error(`channel events written without the channel's order lock`);
    }
    if (manager.queryRunner) (manager.queryRunner.data as Record<string, unknown>)[HAS_EVENTS] = true;
    const inserted = await rows<{ n: number }>(
      manager,
      `WITH s AS (UPDATE channels SET last_seq = last_seq + $3 WHERE id = $2 RETURNING last_seq),
            ins AS (
              INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, traceparent)
              SELECT e.id, $1, $2, s.last_seq - $3 + e.ord, e.type, e.payload, $7
                FROM s, unnest($4::uuid[], $5::text[], $6::jsonb[]) WITH ORDINALITY AS e(id, type, payload, ord)
               ORDER BY e.ord
              RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        workspaceId,
        channelId,
        events.length,
        events.map(() => newId()),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.payload)),
        activeTraceparent(),
      ],
    );
    if (inserted[0]?.n !== events.length) throw new Error(`events for unknown channel ${channelId}`);
  }

  private async insert(
    manager: EntityManager,
    event: WorkspaceEvent,
    channelId: string | null,
    seq: number | null,
  ): Promise<StoredEvent> {
    if (manager.queryRunner) (manager.queryRunner.data as Record<string, unknown>)[HAS_EVENTS] = true;
    const inserted = await rows<StoredEvent>(
      manager,
      `INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience, traceparent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING id, position, tx_id::text AS tx_id, workspace_id, channel_id, seq, type, payload, audience, created_at`,
      [
        newId(),
        event.workspaceId,
        channelId,
        seq,
        event.type,
        event.payload,
        event.audience ?? null,
        activeTraceparent(),
      ],
    );
    return inserted[0]!;
  }
}
