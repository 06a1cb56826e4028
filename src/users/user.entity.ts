import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique, type Relation } from 'typeorm';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `users`: a workspace's users, known to the backend by `external_id`. An erased user's row stays as a
 * placeholder with `external_id` (and name, avatar, metadata) cleared until its messages are erased.
 */
@Entity({ name: 'users' })
@Unique('users_workspace_external', ['workspaceId', 'externalId'])
export class User {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'users_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'users_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  /** Null only on an erased placeholder. */
  @Column('text', { name: 'external_id', nullable: true })
  externalId!: string | null;

  @Column('text', { nullable: true })
  name!: string | null;

  @Column('text', { name: 'avatar_url', nullable: true })
  avatarUrl!: string | null;

  @Column('jsonb', { default: {} })
  metadata!: Record<string, unknown>;

  @Column('timestamptz', { name: 'last_seen_at', nullable: true })
  lastSeenAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
