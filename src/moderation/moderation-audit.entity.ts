import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `moderation_audit`: one row per rule that acted on a message, automatic mute or flag resolution.
 * Channel, user and message are plain ids (with the external ids filters match on): the trail outlives them.
 */
@Entity({ name: 'moderation_audit' })
@Check(
  'moderation_audit_action_check',
  `action IN ('flag', 'mask', 'reject', 'auto_mute', 'dismiss', 'unsend_message', 'ban_user', 'shadow_ban_user')`,
)
// the four pages, newest first: (workspace_id[, filter], id DESC); TypeORM cannot state descending keys
@Index('moderation_audit_workspace', { synchronize: false })
@Index('moderation_audit_user', { synchronize: false })
@Index('moderation_audit_channel', { synchronize: false })
@Index('moderation_audit_channel_ext', { synchronize: false })
export class ModerationAudit {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'moderation_audit_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'moderation_audit_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  /** Null on a user flag's resolution. */
  @Column('uuid', { name: 'channel_id', nullable: true })
  channelId!: string | null;

  @Column('text', { name: 'channel_external_id', nullable: true })
  channelExternalId!: string | null;

  /** Null when the message's author was deleted. */
  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @Column('text', { name: 'user_external_id' })
  userExternalId!: string;

  @Column('uuid', { name: 'message_id', nullable: true })
  messageId!: string | null;

  @Column('text')
  rule!: string;

  @Column('text')
  action!: string;

  @Column('text')
  excerpt!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
