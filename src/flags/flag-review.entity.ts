import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Message } from '../messages/message.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `flag_reviews`: the review queue, one entry per flagged target and review cycle. At most one entry per
 * target is open (partial unique indexes), so concurrent flags upsert into one row.
 */
@Entity({ name: 'flag_reviews' })
@Check('flag_reviews_target_type_check', `target_type IN ('message', 'user')`)
@Check('flag_reviews_status_check', `status IN ('open', 'resolved')`)
@Check(
  'flag_reviews_resolution_action_check',
  `resolution_action IN ('dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user')`,
)
@Check(
  'flag_reviews_target',
  `(target_type = 'message' AND message_id IS NOT NULL AND target_user_id IS NULL)
          OR (target_type = 'user' AND target_user_id IS NOT NULL AND message_id IS NULL)`,
)
@Check(
  'flag_reviews_resolution',
  `(status = 'resolved') = (resolved_at IS NOT NULL AND resolution_action IS NOT NULL)`,
)
@Index('flag_reviews_open_message', ['messageId'], { unique: true, where: `status = 'open'` })
@Index('flag_reviews_open_user', ['targetUserId'], { unique: true, where: `status = 'open'` })
@Index('flag_reviews_message', ['messageId'], { where: 'message_id IS NOT NULL' })
@Index('flag_reviews_user', ['targetUserId'], { where: 'target_user_id IS NOT NULL' })
@Index('flag_reviews_open_queue', ['workspaceId', 'id'], { where: `status = 'open'` })
// (workspace_id, resolved_at DESC, id DESC) WHERE status = 'resolved': TypeORM cannot state descending keys
@Index('flag_reviews_resolved_queue', { synchronize: false })
export class FlagReview {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'flag_reviews_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'flag_reviews_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('text', { name: 'target_type' })
  targetType!: 'message' | 'user';

  @Column('uuid', { name: 'message_id', nullable: true })
  messageId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'flag_reviews_message_id_fkey' })
  message?: Relation<Message> | null;

  @Column('uuid', { name: 'target_user_id', nullable: true })
  targetUserId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'target_user_id', foreignKeyConstraintName: 'flag_reviews_target_user_id_fkey' })
  targetUser?: Relation<User> | null;

  @Column('text', { default: 'open' })
  status!: 'open' | 'resolved';

  @Column('integer', { name: 'flag_count' })
  flagCount!: number;

  @Column('timestamptz', { name: 'first_flagged_at' })
  firstFlaggedAt!: Date;

  @Column('timestamptz', { name: 'last_flagged_at' })
  lastFlaggedAt!: Date;

  @Column('timestamptz', { name: 'resolved_at', nullable: true })
  resolvedAt!: Date | null;

  @Column('text', { name: 'resolution_action', nullable: true })
  resolutionAction!: 'dismiss' | 'unsend_message' | 'ban_user' | 'shadow_ban_user' | null;

  @Column('integer', { name: 'resolution_duration_seconds', nullable: true })
  resolutionDurationSeconds!: number | null;
}
