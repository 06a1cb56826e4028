import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique, type Relation } from 'typeorm';
import { Workspace } from './workspace.entity';

/** `workspace_keys`: a workspace's rotating API key pairs (the secret stored only sealed, under SERVICE_ENCRYPTION_KEY). */
@Entity({ name: 'workspace_keys' })
@Unique('workspace_keys_api_key_key', ['apiKey'])
@Index('workspace_keys_workspace', ['workspaceId'])
export class WorkspaceKey {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'workspace_keys_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'workspace_keys_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('text', { name: 'api_key' })
  apiKey!: string;

  @Column('text', { name: 'secret_sealed' })
  secretSealed!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;
}
