import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Message } from '../messages/message.entity';

/**
 * `message_search` (migration 1763691090000): one search document per message, chat_search_doc() of
 * its content and channel, written off the send's path by the search indexer and rewritten by edits;
 * NULL once the message is unsent. A search matches these and, for the messages after the indexer's
 * cursor, documents computed at query time (docs/SEARCH.md).
 */
@Entity({ name: 'message_search' })
// GIN (doc) WITH (fastupdate = on, gin_pending_list_limit = 256): TypeORM cannot state an index method or
// storage parameters
@Index('message_search_doc', { synchronize: false })
export class MessageSearch {
  @PrimaryColumn('uuid', { name: 'message_id', primaryKeyConstraintName: 'message_search_pkey' })
  messageId!: string;

  @OneToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'message_search_message_id_fkey' })
  message?: Relation<Message>;

  /** The message's channel (a copy, for the channel index a search across channels intersects with). */
  @Index('message_search_channel')
  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @Column({ type: 'tsvector', nullable: true, select: false, insert: false, update: false })
  doc?: string | null;
}
