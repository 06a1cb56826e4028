import { Column, Entity, PrimaryColumn } from 'typeorm';
import { XID8 } from '../infra/database/column-types';

/**
 * `event_relay_cursors`: per relay of the event log ('webhooks', 'push', 'realtime', 'search'), the last
 * (tx_id, position) it handled. The relay locks its row, so instances take turns. Rows are seeded by
 * the migrations.
 */
@Entity({ name: 'event_relay_cursors' })
export class EventRelayCursor {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'event_relay_cursors_pkey' })
  name!: string;

  @Column({ type: XID8, name: 'tx_id' })
  txId!: string;

  @Column('bigint')
  position!: number;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
