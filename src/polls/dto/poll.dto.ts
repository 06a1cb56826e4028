import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsRfc3339 } from '../../common/http/rfc3339';
import { UserRefDto } from '../../messages/dto/message.dto';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../messages/dto/send-message.dto';
import { ActAsDto } from '../../reactions/dto/reaction.dto';

export const MAX_OPTIONS = 10;

/** POST /v1/channels/:id/polls. */
export class CreatePollDto {
  /** 1-300 characters: the poll message's content. */
  @IsString() @MinLength(1) @MaxLength(300) question!: string;

  /** 2-10 options of 1-100 characters on one line, distinct once trimmed, ignoring case. */
  @IsArray()
  @ArrayMinSize(2)
  @ArrayMaxSize(MAX_OPTIONS)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(100, { each: true })
  @Matches(/^[^\r\n]*$/, { each: true, message: 'each option must be a single line' })
  options!: string[];

  /** Voters may choose several options (default false: exactly one). */
  @IsOptional() @IsBoolean() multiple_choice?: boolean;

  /** Nobody, the backend included, can see who voted (default false). */
  @IsOptional() @IsBoolean() anonymous?: boolean;

  /** When it closes by itself: an RFC 3339 time 1 second to 1 year ahead. */
  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2026-12-01T12:00:00Z' })
  @IsOptional()
  @IsRfc3339('closes_at')
  closes_at?: string;

  /** Posts the poll as a reply in this thread. */
  @IsOptional() @IsString() @MaxLength(64) thread_id?: string;

  /** Makes the request retryable, as for a send. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(MAX_IDEMPOTENCY_KEY_LENGTH) idempotency_key?: string;

  /** Backend keys only (and required there): the user who creates the poll. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

/** PUT /v1/messages/:id/poll/vote. */
export class VoteDto extends ActAsDto {
  /** The options chosen: exactly 1 in a single-choice poll, 1 or more distinct ones in a multiple-choice poll. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_OPTIONS)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  option_ids!: string[];
}

/** GET /v1/messages/:id/poll/votes. */
export class PollVotesQueryDto extends ListQueryDto {
  /** Only the votes for this option. */
  @IsOptional() @IsUUID() option_id?: string;
}

export class PollVoteDto {
  option_id!: string;
  user!: UserRefDto;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
}

export class PollVoteListDto {
  /** Newest first. */
  votes!: PollVoteDto[];
  has_more!: boolean;
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}
