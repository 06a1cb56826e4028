import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation, Unique } from 'typeorm';
import { ChannelMember } from '../channels/channel-member.entity';
import { Message } from '../messages/message.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `reminders`: a user's reminder about a message (CONTRACT §25), private to them. The membership and
 * the message own it; `remind_at` null is saved for later, `fired_at` set is due.
 */
@Entity({ name: 'reminders' })
@Unique('reminders_one_per_message', ['userId', 'messageId'])
@Index('reminders_due', ['remindAt'], { where: 'remind_at IS NOT NULL AND fired_at IS NULL' })
// (user_id, created_at DESC, id DESC): TypeORM cannot state descending keys
@Index('reminders_list', { synchronize: false })
@Index('reminders_message', ['messageId'])
@Index('reminders_member', ['channelId', 'userId'])
@Index('reminders_workspace', ['workspaceId'])
export class Reminder {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'reminders_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'reminders_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @ManyToOne(() => ChannelMember, { onDelete: 'CASCADE' })
  @JoinColumn([
    {
      name: 'channel_id',
      referencedColumnName: 'channelId',
      foreignKeyConstraintName: 'reminders_member_fkey',
    },
    { name: 'user_id', referencedColumnName: 'userId', foreignKeyConstraintName: 'reminders_member_fkey' },
  ])
  member?: Relation<ChannelMember>;

  @Column('uuid', { name: 'message_id' })
  messageId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'reminders_message_id_fkey' })
  message?: Relation<Message>;

  /** When it fires; null: saved for later, never fires. */
  @Column('timestamptz', { name: 'remind_at', nullable: true })
  remindAt!: Date | null;

  @Column('timestamptz', { name: 'fired_at', nullable: true })
  firedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
