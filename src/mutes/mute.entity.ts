import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/** `mutes`: a workspace-wide mute of a user (moderation), until an instant or for good (null). */
@Entity({ name: 'mutes' })
export class Mute {
  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'mutes_pkey' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'mutes_user_id_fkey' })
  user?: Relation<User>;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'mutes_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('timestamptz', { nullable: true })
  until!: Date | null;

  @Column('text', { nullable: true })
  reason!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
