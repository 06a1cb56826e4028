import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { SearchQueryDto } from './dto/search-query.dto';
import { SearchService } from './search.service';

@ApiTags('search')
@Controller('v1')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  /** Search one channel (id or external_id): a user JWT must be a member (403 NOT_A_MEMBER). */
  @Get('channels/:id/messages/search')
  @Auth('any')
  inChannel(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Query() q: SearchQueryDto,
  ) {
    return this.search.inChannel(p, channelRef, q);
  }

  /** Search every channel the user belongs to; a backend key searches the whole workspace. */
  @Get('search/messages')
  @Auth('any')
  everywhere(@CurrentPrincipal() p: WorkspacePrincipal, @Query() q: SearchQueryDto) {
    return this.search.everywhere(p, q);
  }
}
