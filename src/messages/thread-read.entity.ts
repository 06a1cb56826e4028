import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ChannelMember } from '../channels/channel-member.entity';
import { Message } from './message.entity';

/**
 * `thread_reads`: a user's cursor in a thread (CONTRACT §23) and whether they take part in it. The
 * membership owns it (leaving the channel drops it); the root's deletion cascades.
 */
@Entity({ name: 'thread_reads' })
@Index('thread_reads_user', ['userId', 'channelId'])
@Index('thread_reads_unread', ['userId', 'channelId'], { where: 'participant AND unread_replies > 0' })
export class ThreadRead {
  @PrimaryColumn('uuid', { name: 'root_id', primaryKeyConstraintName: 'thread_reads_pkey' })
  rootId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'root_id', foreignKeyConstraintName: 'thread_reads_root_id_fkey' })
  root?: Relation<Message>;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'thread_reads_pkey' })
  userId!: string;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => ChannelMember, { onDelete: 'CASCADE' })
  @JoinColumn([
    {
      name: 'channel_id',
      referencedColumnName: 'channelId',
      foreignKeyConstraintName: 'thread_reads_member_fkey',
    },
    { name: 'user_id', referencedColumnName: 'userId', foreignKeyConstraintName: 'thread_reads_member_fkey' },
  ])
  member?: Relation<ChannelMember>;

  /** The root's author, a replier, a mentioned user or one who marked the thread unread. */
  @Column('boolean')
  participant!: boolean;

  /** The cursor: replies before (read_at, read_id) are read; read_id all f's reads the whole instant. */
  @Column('timestamptz', { name: 'read_at' })
  readAt!: Date;

  @Column('uuid', { name: 'read_id' })
  readId!: string;

  /**
   * A participant's live replies after the cursor that are not their own (a non-participant keeps 0),
   * kept by every write that changes it (src/messages/thread-state.sql.ts).
   */
  @Column('integer', { name: 'unread_replies', default: 0 })
  unreadReplies!: number;
}
