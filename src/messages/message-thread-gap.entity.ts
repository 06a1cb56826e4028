import { Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Message } from './message.entity';

/** `message_thread_gaps`: thread ordinals of replies removed outright, which unread replies subtract. */
@Entity({ name: 'message_thread_gaps' })
export class MessageThreadGap {
  @PrimaryColumn('uuid', { name: 'root_id', primaryKeyConstraintName: 'message_thread_gaps_pkey' })
  rootId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'root_id', foreignKeyConstraintName: 'message_thread_gaps_root_id_fkey' })
  root?: Relation<Message>;

  @PrimaryColumn('bigint', { name: 'thread_no', primaryKeyConstraintName: 'message_thread_gaps_pkey' })
  threadNo!: number;
}
