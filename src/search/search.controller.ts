import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, NO_CHANNEL, NOT_A_MEMBER } from '../common/errors/api-errors';
import { SearchPageDto, SearchQueryDto } from './dto/search-query.dto';
import { SearchService } from './search.service';

const BAD_QUERY =
  'VALIDATION_ERROR: q missing or over 256 characters, a limit outside 1-100, before/after not RFC 3339 times, a malformed cursor, an unknown type';

@ApiTags('search')
@Controller('v1')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  /** Search one channel (id or external_id): a user JWT must be a member (403 NOT_A_MEMBER). */
  @Get('channels/:id/messages/search')
  @Auth('any')
  @ApiOperation({ operationId: 'searchChannelMessages', summary: "Search a channel's messages" })
  @ApiOkResponse({ type: SearchPageDto })
  @ApiErrors({ 400: BAD_QUERY, 403: NOT_A_MEMBER, 404: NO_CHANNEL })
  inChannel(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Query() q: SearchQueryDto,
  ): Promise<SearchPageDto> {
    return this.search.inChannel(p, channelRef, q);
  }

  /** Search every channel the user belongs to; a backend key searches the whole workspace. */
  @Get('search/messages')
  @Auth('any')
  @ApiOperation({ operationId: 'searchMessages', summary: 'Search messages across channels' })
  @ApiOkResponse({ type: SearchPageDto })
  @ApiErrors({ 400: BAD_QUERY })
  everywhere(@CurrentPrincipal() p: WorkspacePrincipal, @Query() q: SearchQueryDto): Promise<SearchPageDto> {
    return this.search.everywhere(p, q);
  }
}
