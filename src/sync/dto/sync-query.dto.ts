import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** The query of GET /v1/channels/:id/events. */
export class ChannelEventsQueryDto {
  /** Events after this channel sequence number (default 0: from the start). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) after_seq?: number;
  /** Page size, 1-500 (default 100). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

/** The query of GET /v1/me/sync. */
export class SyncQueryDto {
  /** The `next_cursor` of the previous sync; omit it to get the current cursor. */
  @IsOptional() @IsString() @MaxLength(200) since?: string;
  /** Page size, 1-500 (default 100). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}
