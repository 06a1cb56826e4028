import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/** `bans`: one ban per user and scope (`channel_id` null: workspace-wide); banning again replaces it. */
@Entity({ name: 'bans' })
// UNIQUE (user_id, channel_id) NULLS NOT DISTINCT: TypeORM cannot state NULLS NOT DISTINCT
@Index('bans_scope', { synchronize: false })
@Index('bans_list', ['workspaceId', 'id'])
@Index('bans_channel', ['channelId', 'id'], { where: 'channel_id IS NOT NULL' })
@Index('bans_banned_by', ['bannedBy'], { where: 'banned_by IS NOT NULL' })
export class Ban {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'bans_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'bans_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'bans_user_id_fkey' })
  user?: Relation<User>;

  @Column('uuid', { name: 'channel_id', nullable: true })
  channelId!: string | null;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'bans_channel_id_fkey' })
  channel?: Relation<Channel> | null;

  @Column('boolean', { default: false })
  shadow!: boolean;

  @Column('text', { nullable: true })
  reason!: string | null;

  /** Null: until lifted. An expired ban stops counting. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('uuid', { name: 'banned_by', nullable: true })
  bannedBy!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'banned_by', foreignKeyConstraintName: 'bans_banned_by_fkey' })
  banner?: Relation<User> | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
