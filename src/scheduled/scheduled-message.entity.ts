import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
  Unique,
} from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `scheduled_messages`: a user's send kept until `scheduled_at` (CONTRACT §25), private to them. The
 * user and the channel own it; a sent one is deleted by the send's transaction.
 */
@Entity({ name: 'scheduled_messages' })
@Check('scheduled_messages_status', `status IN ('pending', 'failed')`)
@Unique('scheduled_messages_replay', ['userId', 'idempotencyKey'])
@Index('scheduled_messages_due', ['scheduledAt'], { where: `status = 'pending'` })
@Index('scheduled_messages_list', ['userId', 'scheduledAt', 'id'])
@Index('scheduled_messages_channel', ['channelId'])
@Index('scheduled_messages_workspace', ['workspaceId'])
export class ScheduledMessage {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'scheduled_messages_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'scheduled_messages_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'scheduled_messages_channel_id_fkey' })
  channel?: Relation<Channel>;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'scheduled_messages_user_id_fkey' })
  user?: Relation<User>;

  /** Scheduled through the user's own token: sent as theirs (a frozen channel refuses it). */
  @Column('boolean', { name: 'by_user' })
  byUser!: boolean;

  /** A backend's that asked for the pre-send hook (`run_hooks`). */
  @Column('boolean', { name: 'run_hooks', default: false })
  runHooks!: boolean;

  /** Sent with `skip_previews` (CONTRACT §26). */
  @Column('boolean', { name: 'skip_previews', default: false })
  skipPreviews!: boolean;

  @Column('text')
  content!: string;

  @Column('text', { name: 'attachment_url', nullable: true })
  attachmentUrl!: string | null;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId!: string | null;

  @Column('uuid', { name: 'thread_id', nullable: true })
  threadId!: string | null;

  @Column('boolean', { name: 'show_in_channel', default: false })
  showInChannel!: boolean;

  /** Mentioned members, in the order given. */
  @Column('uuid', { name: 'mention_ids', array: true, default: () => "'{}'" })
  mentionIds!: string[];

  @Column('jsonb', { default: () => "'{}'" })
  metadata!: Record<string, unknown>;

  @Column('text', { name: 'idempotency_key', nullable: true })
  idempotencyKey!: string | null;

  @Column('timestamptz', { name: 'scheduled_at' })
  scheduledAt!: Date;

  @Column('text', { default: 'pending' })
  status!: 'pending' | 'failed';

  /** Why its firing was refused: `{code, message}`. */
  @Column('jsonb', { nullable: true })
  error!: { code: string; message: string } | null;

  /** The firing worker's hold on it, until `claimed_until`. */
  @Column('uuid', { nullable: true })
  claim!: string | null;

  @Column('timestamptz', { name: 'claimed_until', nullable: true })
  claimedUntil!: Date | null;

  /** Firings that ended in an unexpected error (after 5 it is marked failed). */
  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
