import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { User } from '../users/user.entity';
import { Message } from './message.entity';

/** `message_mentions`: the users a message mentions, in order. */
@Entity({ name: 'message_mentions' })
@Index('message_mentions_user', ['userId', 'channelId', 'createdAt'])
@Index('message_mentions_channel', ['channelId'])
export class MessageMention {
  @PrimaryColumn('uuid', { name: 'message_id', primaryKeyConstraintName: 'message_mentions_pkey' })
  messageId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'message_mentions_message_id_fkey' })
  message?: Relation<Message>;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'message_mentions_pkey' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'message_mentions_user_id_fkey' })
  user?: Relation<User>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'message_mentions_channel_id_fkey' })
  channel?: Relation<Channel>;

  @Column('smallint')
  position!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
