import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { WebhookDelivery } from './webhook-delivery.entity';

/** `webhook_attempts`: one row per HTTP attempt of a delivery. */
@Entity({ name: 'webhook_attempts' })
@Index('webhook_attempts_delivery', ['deliveryId', 'attempt'])
export class WebhookAttempt {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'webhook_attempts_pkey' })
  id!: string;

  @Column('uuid', { name: 'delivery_id' })
  deliveryId!: string;

  @ManyToOne(() => WebhookDelivery, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'webhook_attempts_delivery_id_fkey' })
  delivery?: Relation<WebhookDelivery>;

  @Column('integer')
  attempt!: number;

  @Column('timestamptz', { name: 'started_at' })
  startedAt!: Date;

  @Column('integer', { name: 'duration_ms' })
  durationMs!: number;

  @Column('text')
  outcome!: string;

  @Column('integer', { name: 'response_status', nullable: true })
  responseStatus!: number | null;

  @Column('text', { name: 'response_body', nullable: true })
  responseBody!: string | null;

  @Column('text', { nullable: true })
  error!: string | null;
}
