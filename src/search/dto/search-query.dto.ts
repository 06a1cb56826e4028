import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import type { MessageType } from '../../messages/message-view.service';

export const MESSAGE_TYPES: MessageType[] = ['text', 'image', 'file', 'system'];

/** Query of both search routes (CONTRACT §8). Times are checked as RFC 3339 by the service. */
export class SearchQueryDto {
  /** `"exact phrase"`, `OR`, `-exclude`; case-insensitive, no stemming, punctuation ignored. */
  @IsString() @Length(1, 256) q!: string;

  /** Page size, 1-100 (default 50). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;

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
