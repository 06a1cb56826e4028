import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  Unique,
  type Relation,
} from 'typeorm';
import type { DeliveryStatus } from './webhook-events';
import { Webhook } from './webhook.entity';

/**
 * `webhook_deliveries`: one row per (webhook, event), leased by a worker while it is attempted.
 * `workspace_id` and `event_id` are plain ids: a delivery outlives the event's retention.
 */
@Entity({ name: 'webhook_deliveries' })
@Unique('webhook_deliveries_once', ['webhookId', 'eventId'])
@Check(
  'webhook_deliveries_status_check',
  `status IN ('pending', 'succeeded', 'failed', 'permanently_failed')`,
)
// (webhook_id, id DESC): TypeORM cannot state descending keys
@Index('webhook_deliveries_list', { synchronize: false })
// (webhook_id, status, id DESC): TypeORM cannot state descending keys
@Index('webhook_deliveries_status', { synchronize: false })
@Index('webhook_deliveries_due', ['nextAttemptAt'], { where: `status = 'pending'` })
export class WebhookDelivery {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  id!: string;

  @Column('uuid', { name: 'webhook_id' })
  webhookId!: string;

  @ManyToOne(() => Webhook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'webhook_deliveries_webhook_id_fkey' })
  webhook?: Relation<Webhook>;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('uuid', { name: 'event_id' })
  eventId!: string;

  @Column('text')
  event!: string;

  @Column('text', { default: 'pending' })
  status!: DeliveryStatus;

  @Column('integer', { default: 0 })
  attempts!: number;

  /** `attempts` at the start of the current retry cycle (a manual retry starts a new one). */
  @Column('integer', { name: 'cycle_start', default: 0 })
  cycleStart!: number;

  @Column('integer', { name: 'response_status', nullable: true })
  responseStatus!: number | null;

  @Column('text', { name: 'response_body', nullable: true })
  responseBody!: string | null;

  @Column('text', { nullable: true })
  error!: string | null;

  @Column('timestamptz', { name: 'next_attempt_at', nullable: true, default: () => 'now()' })
  nextAttemptAt!: Date | null;

  @Column('uuid', { name: 'lease_token', nullable: true })
  leaseToken!: string | null;

  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
