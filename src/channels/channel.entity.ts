import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `channels`: direct (one per pair of users: `direct_pair`) and group channels. `last_seq` and
 * `message_count` advance under the channel's order lock in chat_send_message.
 */
@Entity({ name: 'channels' })
@Unique('channels_workspace_external', ['workspaceId', 'externalId'])
@Unique('channels_direct_pair', ['workspaceId', 'directPair'])
// the target of messages' (channel_id, workspace_id) key: a message's workspace is its channel's
@Unique('channels_id_workspace', ['id', 'workspaceId'])
@Check('channels_type_check', `type IN ('direct', 'group')`)
@Check('channels_slow_mode_seconds_check', `slow_mode_seconds BETWEEN 0 AND 3600`)
@Check('channels_metadata_check', `jsonb_typeof(metadata) = 'object'`)
// (workspace_id, created_at DESC, id DESC): TypeORM cannot state a descending key
@Index('channels_workspace_created', { synchronize: false })
// GIN (metadata jsonb_path_ops): TypeORM cannot state an index method or operator class
@Index('channels_metadata', { synchronize: false })
@Index('channels_created_by', ['createdBy'], { where: 'created_by IS NOT NULL' })
export class Channel {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'channels_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'channels_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('text')
  type!: 'direct' | 'group';

  @Column('text', { name: 'external_id' })
  externalId!: string;

  @Column('text', { nullable: true })
  name!: string | null;

  @Column('text', { name: 'avatar_url', nullable: true })
  avatarUrl!: string | null;

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'channels_created_by_fkey' })
  creator?: Relation<User> | null;

  /** A direct channel's two user ids, sorted and joined; null on a group. */
  @Column('text', { name: 'direct_pair', nullable: true })
  directPair!: string | null;

  @Column('bigint', { name: 'last_seq', default: 0 })
  lastSeq!: number;

  @Column('timestamptz', { name: 'last_message_at', nullable: true })
  lastMessageAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  /** Messages counted in the channel's conversation (the inbox's unread arithmetic). */
  @Column('bigint', { name: 'message_count', default: 0 })
  messageCount!: number;

  /** Rows in channel_members, kept by the chat_count_members trigger (CONTRACT §29: large channels). */
  @Column('integer', { name: 'member_count', default: 0 })
  memberCount!: number;

  /** When its members last changed (the chat_count_members trigger): a send soon after goes through the log. */
  @Column('timestamptz', { name: 'members_changed_at', default: () => 'now()' })
  membersChangedAt!: Date;

  @Column('boolean', { default: false })
  frozen!: boolean;

  @Column('integer', { name: 'slow_mode_seconds', default: 0 })
  slowModeSeconds!: number;

  @Column('jsonb', { default: {} })
  metadata!: Record<string, unknown>;
}
