import { Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';

/** `message_gaps`: channel ordinals of messages removed outright, which the inbox's unread counts subtract. */
@Entity({ name: 'message_gaps' })
export class MessageGap {
  @PrimaryColumn('uuid', { name: 'channel_id', primaryKeyConstraintName: 'message_gaps_pkey' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'message_gaps_channel_id_fkey' })
  channel?: Relation<Channel>;

  @PrimaryColumn('bigint', { name: 'channel_no', primaryKeyConstraintName: 'message_gaps_pkey' })
  channelNo!: number;
}
