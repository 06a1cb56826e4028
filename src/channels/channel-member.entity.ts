import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';
import { Channel } from './channel.entity';

/** `channel_members`: a user's membership of a channel, with their read cursors and per-user channel state. */
@Entity({ name: 'channel_members' })
@Check('channel_members_role_check', `role IN ('admin', 'member')`)
@Check('channel_members_hidden', `(hidden_others IS NULL) = (hidden_at IS NULL)`)
@Index('channel_members_user', ['userId', 'channelId'])
@Index('channel_members_admins', ['channelId'], { where: `role = 'admin'` })
export class ChannelMember {
  @PrimaryColumn('uuid', { name: 'channel_id', primaryKeyConstraintName: 'channel_members_pkey' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'channel_members_channel_id_fkey' })
  channel?: Relation<Channel>;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'channel_members_pkey' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'channel_members_user_id_fkey' })
  user?: Relation<User>;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'channel_members_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  /** Null in a direct channel. */
  @Column('text', { nullable: true })
  role!: 'admin' | 'member' | null;

  @Column('timestamptz', { name: 'joined_at' })
  joinedAt!: Date;

  @Column('timestamptz', { name: 'last_read_at' })
  lastReadAt!: Date;

  @Column('timestamptz', { name: 'last_delivered_at' })
  lastDeliveredAt!: Date;

  /** CONTRACT §22: the member's own read position just before this message (its created_at and id), when marked unread. */
  @Column('timestamptz', { name: 'unread_at', nullable: true })
  unreadAt!: Date | null;

  @Column('uuid', { name: 'unread_id', nullable: true })
  unreadId!: string | null;

  /** The member's own messages counted in the channel (the inbox's unread arithmetic). */
  @Column('bigint', { name: 'sent_count', default: 0 })
  sentCount!: number;

  /** No push while in the future; `infinity` is "forever". */
  @Column('timestamptz', { name: 'muted_until', nullable: true })
  mutedUntil!: Date | null;

  @Column('boolean', { default: false })
  archived!: boolean;

  /** Hidden while the channel has at most this many messages from others; null: not hidden. */
  @Column('bigint', { name: 'hidden_others', nullable: true })
  hiddenOthers!: number | null;

  @Column('timestamptz', { name: 'hidden_at', nullable: true })
  hiddenAt!: Date | null;

  /** The member's last own send (slow mode). */
  @Column('timestamptz', { name: 'last_sent_at', nullable: true })
  lastSentAt!: Date | null;
}
