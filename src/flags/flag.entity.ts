import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Message } from '../messages/message.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';
import { FlagReview } from './flag-review.entity';

/**
 * `flags`: one row per report; a user flags a target once, ever. A flag is inserted before its review
 * entry's upsert, so `review_id`'s foreign key is checked at commit (DEFERRABLE INITIALLY DEFERRED).
 */
@Entity({ name: 'flags' })
@Check('flags_target_type_check', `target_type IN ('message', 'user')`)
@Check('flags_target', `(message_id IS NULL) <> (target_user_id IS NULL)`)
@Index('flags_message_by_user', ['messageId', 'byUser'], { unique: true })
@Index('flags_user_by_user', ['targetUserId', 'byUser'], { unique: true })
@Index('flags_review', ['reviewId', 'createdAt'])
@Index('flags_by_user', ['byUser'], { where: 'by_user IS NOT NULL' })
export class Flag {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'flags_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'flags_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'review_id' })
  reviewId!: string;

  @ManyToOne(() => FlagReview, { onDelete: 'CASCADE', deferrable: 'INITIALLY DEFERRED' })
  @JoinColumn({ name: 'review_id', foreignKeyConstraintName: 'flags_review_id_fkey' })
  review?: Relation<FlagReview>;

  @Column('text', { name: 'target_type' })
  targetType!: 'message' | 'user';

  @Column('uuid', { name: 'message_id', nullable: true })
  messageId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'flags_message_id_fkey' })
  message?: Relation<Message> | null;

  @Column('uuid', { name: 'target_user_id', nullable: true })
  targetUserId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'target_user_id', foreignKeyConstraintName: 'flags_target_user_id_fkey' })
  targetUser?: Relation<User> | null;

  /** The reporter; null for automatic moderation's flags and once the reporter is deleted. */
  @Column('uuid', { name: 'by_user', nullable: true })
  byUser!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'by_user', foreignKeyConstraintName: 'flags_by_user_fkey' })
  reporter?: Relation<User> | null;

  @Column('text', { nullable: true })
  reason!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
