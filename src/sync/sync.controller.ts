import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, NO_CHANNEL, NOT_A_MEMBER } from '../common/errors/api-errors';
import { ChannelEventPageDto, ChannelEventsQueryDto, SyncPageDto, SyncQueryDto } from './dto/sync-query.dto';
import { SyncService } from './sync.service';

@ApiTags('sync')
@Controller('v1')
export class SyncController {
  constructor(private readonly sync: SyncService) {}

  /** A channel's events after a seq, in order, as realtime carried them. */
  @Get('channels/:id/events')
  @Auth('any')
  @ApiOperation({
    operationId: 'listChannelEvents',
    summary: "List a channel's events after a sequence number",
  })
  @ApiOkResponse({ type: ChannelEventPageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: after_seq below 0, a limit outside 1-500',
    403: NOT_A_MEMBER,
    404: NO_CHANNEL,
  })
  channelEvents(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() q: ChannelEventsQueryDto,
  ): Promise<ChannelEventPageDto> {
    return this.sync.channelEvents(p, id, q.after_seq ?? 0, q.limit ?? 100);
  }

  /** Every event of the caller's channels (and its own membership changes) after a cursor, in commit order. */
  @Get('me/sync')
  @Auth('user')
  @ApiOperation({ operationId: 'syncMyEvents', summary: "Catch up on every event of the caller's channels" })
  @ApiOkResponse({ type: SyncPageDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: a malformed since cursor, a limit outside 1-500' })
  meSync(@CurrentPrincipal() p: UserPrincipal, @Query() q: SyncQueryDto): Promise<SyncPageDto> {
    return this.sync.sync(p, q.since, q.limit ?? 100);
  }
}
