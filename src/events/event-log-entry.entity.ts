import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { XID8 } from '../infra/database/column-types';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `events`: the event log (transactional outbox). Its global order is (tx_id, position); readers stop
 * below the oldest running transaction, so a late commit is never skipped. `channel_id` is a plain id:
 * a channel's events outlive it until retention removes them.
 */
@Entity({ name: 'events' })
@Unique('events_id_key', ['id'])
@Unique('events_channel_seq', ['channelId', 'seq'])
@Index('events_workspace_order', ['workspaceId', 'txId', 'position'])
@Index('events_tx_order', ['txId', 'position'])
@Index('events_created_at', ['createdAt'])
export class EventLogEntry {
  @PrimaryGeneratedColumn('increment', { type: 'bigint', primaryKeyConstraintName: 'events_pkey' })
  position!: number;

  @Column('uuid')
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'events_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'channel_id', nullable: true })
  channelId!: string | null;

  /** The channel's sequence number of the event (null for events outside a channel). */
  @Column('bigint', { nullable: true })
  seq!: number | null;

  @Column('text')
  type!: string;

  @Column('jsonb')
  payload!: Record<string, unknown>;

  /**
   * The users whose sockets the event concerns: a workspace event's only realtime recipients; for
   * `channel.created` and `member.joined`, the users whose sockets join the channel's room.
   */
  @Column('uuid', { array: true, nullable: true })
  audience!: string[] | null;

  /** The W3C traceparent of the span that wrote it, while tracing is on (src/ops/tracing): followers link to it. */
  @Column('text', { nullable: true })
  traceparent!: string | null;

  @Column({ type: XID8, name: 'tx_id', default: () => 'pg_current_xact_id()' })
  txId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
