import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { SERVER_EVENTS, type ServerEventName } from '../../contract/realtime';

/** Page size of the event routes: 1-500, default 100. */
const EVENT_LIMIT = { type: 'integer', minimum: 1, maximum: 500, default: 100 } as const;

/** The query of GET /v1/channels/:id/events. */
export class ChannelEventsQueryDto {
  /** Events after this channel sequence number (default 0: from the start). */
  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  after_seq?: number;
  /** Page size, 1-500 (default 100). */
  @ApiPropertyOptional(EVENT_LIMIT)
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

/** The query of GET /v1/me/sync. */
export class SyncQueryDto {
  /** The `next_cursor` of the previous sync; omit it to get the current cursor. */
  @IsOptional() @IsString() @MaxLength(200) since?: string;
  /** Page size, 1-500 (default 100). */
  @ApiPropertyOptional(EVENT_LIMIT)
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

/** An event as realtime carried it. */
@ApiSchema({ name: 'SyncEvent' })
export class SyncEventDto {
  /** The channel's sequence number; absent on user-scoped events. */
  @ApiPropertyOptional({ type: 'integer' })
  seq?: number;
  /** The event name, as realtime names it (`message.new`, `draft.updated`, …). */
  @ApiProperty({ enum: SERVER_EVENTS, enumName: 'RealtimeEventName' })
  type!: ServerEventName;
  /** Absent on events that concern no channel. */
  channel_id?: string;
  /** The event's payload, as the realtime envelope's `data`. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  data!: unknown;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

/** GET /v1/channels/:id/events: the channel's events after `after_seq`, in order. */
@ApiSchema({ name: 'ChannelEventPage' })
export class ChannelEventPageDto {
  events!: SyncEventDto[];
  /** More events follow: ask again with the last `seq` as `after_seq`. */
  has_more!: boolean;
}

/** GET /v1/me/sync. */
@ApiSchema({ name: 'SyncPage' })
export class SyncPageDto {
  events!: SyncEventDto[];
  /** Pass as `since` next time (also when there are no events). */
  next_cursor!: string;
  has_more!: boolean;
  /** The cursor is older than the event retention: no events; reload from history. */
  gap!: boolean;
}
