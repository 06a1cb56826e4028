import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { rows } from '../infra/database/sql';
import { HAS_EVENTS } from './event-notifier';
import { isChannelOrdered } from './channel-order';
import { DomainEventType, NewEvent, StoredEvent } from './event-types';

/**
 * The transactional outbox. `append` must be called with the manager of the transaction that makes
 * the change, so the event commits (or rolls back) with it. Channel events take the channel's next
 * `seq` under the channel row's lock, which makes the sequence contiguous per channel.
 */
@Injectable()
export class EventLogService {
  async append<T extends DomainEventType>(manager: EntityManager, event: NewEvent<T>): Promise<StoredEvent> {
    if (manager.queryRunner) (manager.queryRunner.data as Record<string, unknown>)[HAS_EVENTS] = true;
    let seq: number | null = null;
    if (event.channelId) {
      if (!isChannelOrdered(manager, event.channelId)) {
        throw new Error(`channel event ${event.type} written without orderChannelWrites() first in its transaction`);
      }
      const updated = await rows<{ last_seq: number }>(
        manager,
        `UPDATE channels SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq`,
        [event.channelId],
      );
      const row = updated[0];
      if (!row) throw new Error(`event for unknown channel ${event.channelId}`);
      seq = row.last_seq;
    }
    const inserted = await rows<StoredEvent>(
      manager,
      `INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id, position, tx_id::text AS tx_id, workspace_id, channel_id, seq, type, payload, audience, created_at`,
      [newId(), event.workspaceId, event.channelId ?? null, seq, event.type, event.payload, event.audience ?? null],
    );
    return inserted[0]!;
  }
}
