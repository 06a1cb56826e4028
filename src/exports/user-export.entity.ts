import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `user_exports`: one row per requested data export, built by a worker under a lease and swept after
 * `expires_at`. At most one pending export per user (partial unique index).
 */
@Entity({ name: 'user_exports' })
@Check('user_exports_status_check', `status IN ('pending', 'ready', 'failed')`)
@Check('user_exports_check', `(status = 'pending') = (expires_at IS NULL)`)
@Index('user_exports_user', ['userId', 'createdAt'])
@Index('user_exports_pending', ['userId'], { unique: true, where: `status = 'pending'` })
@Index('user_exports_expiry', ['status', 'expiresAt'])
export class UserExport {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'user_exports_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'user_exports_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  /** Null once the user is erased; the sweeper then removes the export. */
  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'user_exports_user_id_fkey' })
  user?: Relation<User> | null;

  @Column('text', { name: 'user_external_id' })
  userExternalId!: string;

  @Column('text', { default: 'pending' })
  status!: 'pending' | 'ready' | 'failed';

  @Column('text', { name: 'object_key', nullable: true })
  objectKey!: string | null;

  @Column('bigint', { name: 'size_bytes', nullable: true })
  sizeBytes!: number | null;

  @Column('text', { nullable: true })
  error!: string | null;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('uuid', { name: 'lease_owner', nullable: true })
  leaseOwner!: string | null;

  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'ready_at', nullable: true })
  readyAt!: Date | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;
}
