import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ChannelMember } from '../channels/channel-member.entity';
import { Message } from '../messages/message.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `drafts`: a user's unsent composer text per (channel, thread or none), CONTRACT §24. The membership
 * owns it: leaving the channel (or its deletion, or an erasure) cascades.
 */
@Entity({ name: 'drafts' })
// UNIQUE (user_id, channel_id, thread_id) NULLS NOT DISTINCT: TypeORM cannot state NULLS NOT DISTINCT
@Index('drafts_scope', { synchronize: false })
// (user_id, updated_at DESC, id DESC): TypeORM cannot state descending keys
@Index('drafts_list', { synchronize: false })
@Index('drafts_workspace', ['workspaceId'])
@Index('drafts_thread', ['threadId'], { where: 'thread_id IS NOT NULL' })
@Index('drafts_parent', ['parentId'], { where: 'parent_id IS NOT NULL' })
export class Draft {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'drafts_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'drafts_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @ManyToOne(() => ChannelMember, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'channel_id', referencedColumnName: 'channelId', foreignKeyConstraintName: 'drafts_member_fkey' },
    { name: 'user_id', referencedColumnName: 'userId', foreignKeyConstraintName: 'drafts_member_fkey' },
  ])
  member?: Relation<ChannelMember>;

  /** The thread's root; null for the channel's own composer. */
  @Column('uuid', { name: 'thread_id', nullable: true })
  threadId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'thread_id', foreignKeyConstraintName: 'drafts_thread_id_fkey' })
  thread?: Relation<Message> | null;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'drafts_parent_id_fkey' })
  parent?: Relation<Message> | null;

  @Column('text')
  content!: string;

  @Column('text', { name: 'attachment_url', nullable: true })
  attachmentUrl!: string | null;

  /** Mentioned members, in the order given. */
  @Column('uuid', { name: 'mention_ids', array: true, default: () => "'{}'" })
  mentionIds!: string[];

  @Column('jsonb', { default: () => "'{}'" })
  metadata!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
