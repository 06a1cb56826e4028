import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { SyncService } from './sync.service';

export class ChannelEventsQueryDto {
  /** Events after this channel sequence number (default 0: from the start). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) after_seq?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

export class SyncQueryDto {
  /** The `next_cursor` of the previous sync; omit it to get the current cursor. */
  @IsOptional() @IsString() @MaxLength(200) since?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

@ApiTags('sync')
@Controller('v1')
export class SyncController {
  constructor(private readonly sync: SyncService) {}

  /** A channel's events after a seq, in order, as realtime carried them. */
  @Get('channels/:id/events')
  @Auth('any')
  channelEvents(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Query() q: ChannelEventsQueryDto) {
    return this.sync.channelEvents(p, id, q.after_seq ?? 0, q.limit ?? 100);
  }

  /** Every event of the caller's channels (and its own membership changes) after a cursor, in commit order. */
  @Get('me/sync')
  @Auth('user')
  meSync(@CurrentPrincipal() p: UserPrincipal, @Query() q: SyncQueryDto) {
    return this.sync.sync(p, q.since, q.limit ?? 100);
  }
}
