import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export class MarkDto {
  /** Backend keys name the user they act for. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

/** The caller's cursors after marking a channel read or delivered. */
@ApiSchema({ name: 'ReadCursors' })
export class ReadCursorsDto {
  @ApiProperty({ format: 'date-time' })
  last_read_at!: string;
  @ApiProperty({ format: 'date-time' })
  last_delivered_at!: string;
}

@ApiSchema({ name: 'MemberReceipt' })
export class MemberReceiptDto extends ReadCursorsDto {
  external_id!: string;
}

/** GET /v1/channels/:id/receipts: every member's cursors. */
@ApiSchema({ name: 'ChannelReceipts' })
export class ChannelReceiptsDto {
  members!: MemberReceiptDto[];
}

/** POST /v1/channels/:id/unread (CONTRACT §22). */
export class MarkUnreadDto extends MarkDto {
  /** The first message to count as unread again: it and every later one are unread. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  message_id!: string;
}

/** The caller's read position and counts after marking a channel unread (also `notification.mark_unread`'s data). */
@ApiSchema({ name: 'MarkUnreadResult' })
export class MarkUnreadResultDto {
  channel_id!: string;
  /** Always null here (a thread's read state is its own). */
  @ApiProperty({ type: 'string', nullable: true, enum: [null] })
  thread_id!: null;
  message_id!: string;
  /** The message's `created_at` less 1 ms (counting uses the exact position, just before the message). */
  @ApiProperty({ format: 'date-time' })
  last_read_at!: string;
  unread_count!: number;
  mention_unread_count!: number;
}
