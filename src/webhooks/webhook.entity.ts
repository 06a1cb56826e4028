import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { PG_SNAPSHOT } from '../infra/database/column-types';
import { Workspace } from '../workspaces/workspace.entity';
import type { SigningMode } from './webhook-events';

/** `webhooks`: a workspace's outbound webhook subscriptions. */
@Entity({ name: 'webhooks' })
@Check('webhooks_signing_check', `signing IN ('signing_secret', 'api_secret')`)
@Index('webhooks_workspace', ['workspaceId', 'id'])
export class Webhook {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'webhooks_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'webhooks_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('text')
  url!: string;

  @Column('text', { array: true })
  events!: string[];

  @Column('text', { nullable: true })
  description!: string | null;

  @Column('boolean', { default: true })
  enabled!: boolean;

  @Column('text', { default: 'signing_secret' })
  signing!: SigningMode;

  @Column('text', { name: 'secret_sealed', nullable: true })
  secretSealed!: string | null;

  @Column('integer', { name: 'consecutive_failures', default: 0 })
  consecutiveFailures!: number;

  @Column('timestamptz', { name: 'disabled_at', nullable: true })
  disabledAt!: Date | null;

  @Column('text', { name: 'disabled_reason', nullable: true })
  disabledReason!: string | null;

  /** The creating statement's snapshot: events committed before it are never delivered to this webhook. */
  @Column({ type: PG_SNAPSHOT, name: 'created_snapshot', default: () => 'pg_current_snapshot()' })
  createdSnapshot!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  /** The private-network policy of the instance that accepted the URL. */
  @Column('boolean', { name: 'allow_private_networks', default: false })
  allowPrivateNetworks!: boolean;
}
