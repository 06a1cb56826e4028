import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/** `blocks`: a user blocks another (never themselves). */
@Entity({ name: 'blocks' })
@Check('blocks_check', `blocker_id <> blocked_id`)
@Index('blocks_blocked', ['blockedId'])
// (blocker_id, created_at DESC, blocked_id DESC): TypeORM cannot state descending keys
@Index('blocks_blocker_created', { synchronize: false })
export class Block {
  @PrimaryColumn('uuid', { name: 'blocker_id', primaryKeyConstraintName: 'blocks_pkey' })
  blockerId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'blocker_id', foreignKeyConstraintName: 'blocks_blocker_id_fkey' })
  blocker?: Relation<User>;

  @PrimaryColumn('uuid', { name: 'blocked_id', primaryKeyConstraintName: 'blocks_pkey' })
  blockedId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'blocked_id', foreignKeyConstraintName: 'blocks_blocked_id_fkey' })
  blocked?: Relation<User>;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'blocks_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
