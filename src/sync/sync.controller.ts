import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ChannelEventsQueryDto, SyncQueryDto } from './dto/sync-query.dto';
import { SyncService } from './sync.service';

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
