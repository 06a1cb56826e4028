import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { LIMIT_PROPERTY } from '../../common/http/list-query.dto';
import { PageDto } from '../../common/http/page.dto';
import { MessageDto } from '../../messages/dto/message.dto';
import type { MessageType } from '../../contract/events';

export const MESSAGE_TYPES: MessageType[] = ['text', 'image', 'file', 'system'];

/** Query of both search routes. Times are checked as RFC 3339 by the service. */
export class SearchQueryDto {
  /** `"exact phrase"`, `OR`, `-exclude`; case-insensitive, no stemming, punctuation ignored. */
  @IsString() @Length(1, 256) q!: string;

  /** Page size, 1-100 (default 50). */
  @ApiPropertyOptional(LIMIT_PROPERTY)
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  /** RFC 3339 time: only messages sent before it. */
  @IsOptional() @IsString() @MaxLength(64) before?: string;

  /** RFC 3339 time: only messages sent after it. */
  @IsOptional() @IsString() @MaxLength(64) after?: string;

  /** The `next_cursor` of the previous page. */
  @IsOptional() @IsString() @MaxLength(512) cursor?: string;

  /** Only messages by this author (external id). */
  @IsOptional() @IsString() @Length(1, 128) user?: string;

  @IsOptional() @IsIn(MESSAGE_TYPES) type?: MessageType;

  /** `true`: only messages with an attachment; `false`: only messages without one. */
  @IsOptional() @IsIn(['true', 'false']) has_attachment?: 'true' | 'false';
}

/** A search result: the message as history renders it, and where the terms matched. */
@ApiSchema({ name: 'SearchHit' })
export class SearchHitDto extends MessageDto {
  /** Matched spans as `[start, end)` offsets into `content`, in UTF-16 code units. */
  @ApiProperty({
    type: 'array',
    items: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
    example: [[0, 5]],
  })
  highlights!: [number, number][];
}

/** Ranked results; pass `next_cursor` as `cursor` for the next page. */
@ApiSchema({ name: 'SearchPage' })
export class SearchPageDto extends PageDto {
  messages!: SearchHitDto[];
}
