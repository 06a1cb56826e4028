import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Message } from './message.entity';

/**
 * `message_threads`: a thread root's counters, one row per root that has had a reply, kept by
 * chat_send_message and unsends. `channel_id` is a plain id: the root's cascade removes the row.
 */
@Entity({ name: 'message_threads' })
@Check('message_threads_reply_count_check', `reply_count >= 0`)
export class MessageThread {
  @PrimaryColumn('uuid', { name: 'root_id', primaryKeyConstraintName: 'message_threads_pkey' })
  rootId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'root_id', foreignKeyConstraintName: 'message_threads_root_id_fkey' })
  root?: Relation<Message>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @Column('integer', { name: 'reply_count', default: 0 })
  replyCount!: number;

  @Column('timestamptz', { name: 'last_reply_at', nullable: true })
  lastReplyAt!: Date | null;

  /** The last reply ordinal given (`messages.thread_no`). */
  @Column('bigint', { name: 'reply_no', default: 0 })
  replyNo!: number;

  /** Reply authors, earliest first, at most 10. */
  @Column('uuid', { array: true, default: () => "'{}'" })
  participants!: string[];
}
