import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { Message } from '../messages/message.entity';
import { User } from '../users/user.entity';

/** `reactions`: one reaction per user per message (the primary key). */
@Entity({ name: 'reactions' })
@Index('reactions_channel', ['channelId'])
@Index('reactions_user_message', ['userId', 'messageId'])
export class Reaction {
  @PrimaryColumn('uuid', { name: 'message_id', primaryKeyConstraintName: 'reactions_pkey' })
  messageId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'reactions_message_id_fkey' })
  message?: Relation<Message>;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'reactions_pkey' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'reactions_user_id_fkey' })
  user?: Relation<User>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'reactions_channel_id_fkey' })
  channel?: Relation<Channel>;

  @Column('text')
  emoji!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
