import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsMetadata } from '../../common/http/metadata';
import { IsOptionalNotNull } from '../../common/http/optional';
import { IsRfc3339 } from '../../common/http/rfc3339';
import { ScheduledMessageDto } from '../../messages/dto/scheduled-message.dto';
import { MAX_MENTIONS } from '../../messages/dto/send-message.dto';
import { MarkDto } from '../../receipts/dto/receipt.dto';

/** PATCH /v1/scheduled/:id: what is given replaces what was scheduled, checked as the send is. */
export class UpdateScheduledMessageDto extends MarkDto {
  @IsOptional() @IsString() content?: string;

  /** 1 s to 30 days ahead; re-arms a failed scheduled message. */
  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2026-12-01T09:00:00Z' })
  @IsOptional()
  @IsRfc3339('scheduled_at')
  scheduled_at?: string;

  /** External ids of mentioned channel members (at most 50); [] for none. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true, message: `each mention ${EXTERNAL_ID_RULE}` })
  mentions?: string[];

  @IsOptionalNotNull() @IsMetadata() metadata?: Record<string, unknown>;

  /** Must begin with the public attachment base URL; null removes it. */
  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  attachment_url?: string | null;
}

/** DELETE /v1/scheduled/:id (a backend key names the user). */
export class ScheduledTargetQueryDto extends MarkDto {}

export class ScheduledListQueryDto extends ListQueryDto {
  /** Only the scheduled messages into this channel (its id or external_id). */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) channel?: string;
}

@ApiSchema({ name: 'ScheduledMessageList' })
export class ScheduledMessageListDto {
  @ApiProperty({ type: [ScheduledMessageDto] }) scheduled_messages!: ScheduledMessageDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ type: String, nullable: true }) next_cursor!: string | null;
}
