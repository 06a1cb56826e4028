import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { Message } from '../messages/message.entity';
import { User } from '../users/user.entity';

/** `message_pins`: a channel's pinned messages (a table of its own, so a pin never rewrites the message row). */
@Entity({ name: 'message_pins' })
// (channel_id, pinned_at DESC, message_id DESC): TypeORM cannot state descending keys
@Index('message_pins_channel', { synchronize: false })
@Index('message_pins_pinned_by', ['pinnedBy'], { where: 'pinned_by IS NOT NULL' })
export class MessagePin {
  @PrimaryColumn('uuid', { name: 'message_id', primaryKeyConstraintName: 'message_pins_pkey' })
  messageId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'message_pins_message_id_fkey' })
  message?: Relation<Message>;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'message_pins_channel_id_fkey' })
  channel?: Relation<Channel>;

  /** Null when pinned by the backend, or once the user who pinned is deleted. */
  @Column('uuid', { name: 'pinned_by', nullable: true })
  pinnedBy!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'pinned_by', foreignKeyConstraintName: 'message_pins_pinned_by_fkey' })
  pinner?: Relation<User> | null;

  @Column('timestamptz', { name: 'pinned_at' })
  pinnedAt!: Date;
}
