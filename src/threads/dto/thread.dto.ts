import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { MessageDto } from '../../messages/dto/message.dto';
import { MarkDto } from '../../receipts/dto/receipt.dto';

/** POST /v1/messages/:id/thread/unread (CONTRACT §23). */
export class ThreadUnreadDto extends MarkDto {
  /** The first reply to count as unread again; without it, the newest reply not written by the user. */
  @IsOptional() @IsString() @MaxLength(64) message_id?: string;
}

/** The user's read state of a thread after thread read or unread (also the events' data). */
@ApiSchema({ name: 'ThreadReadResult' })
export class ThreadReadResultDto {
  /** The thread's root. */
  thread_id!: string;
  channel_id!: string;
  /** The cursor: now after a read; the reply's `created_at` less 1 ms after an unread. Null: no cursor. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_read_at!: string | null;
  /** Live replies after the cursor, not the user's own nor from users they block. */
  unread_replies!: number;
}

export class MyThreadsQueryDto extends ListQueryDto {
  /** Only the threads of this channel (id or external_id). */
  @IsOptional() @IsString() @MaxLength(200) channel?: string;

  /** Only threads with unread replies. */
  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'unread_only must be true or false' })
  unread_only?: boolean;
}

@ApiSchema({ name: 'MyThread' })
export class MyThreadDto {
  thread_id!: string;
  channel_id!: string;
  channel_external_id!: string;
  /** The root, as history shows it to the caller. */
  root!: MessageDto;
  /** Live replies. */
  reply_count!: number;
  unread_replies!: number;
  @ApiProperty({ format: 'date-time' })
  last_reply_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_read_at!: string | null;
}

@ApiSchema({ name: 'MyThreadList' })
export class MyThreadListDto {
  @ApiProperty({ type: [MyThreadDto] }) threads!: MyThreadDto[];
  has_more!: boolean;
  @ApiProperty({ type: String, nullable: true }) next_cursor!: string | null;
}
