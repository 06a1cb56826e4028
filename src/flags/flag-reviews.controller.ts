import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors } from '../common/errors/api-errors';
import { FlagQueueQueryDto, ResolveFlagDto } from './dto/flag.dto';
import { FlagEntryDto, FlagEntryPageDto } from './dto/flag-response.dto';
import { FlagReviewsService } from './flag-reviews.service';

/** the review queue of flags (backend key). */
@ApiTags('moderation')
@Auth('backend')
@Controller('v1/moderation/flags')
export class FlagReviewsController {
  constructor(private readonly reviews: FlagReviewsService) {}

  /**
   * One entry per flagged target (a message or a user) and review cycle: `status=open` (the default)
   * oldest first, `status=resolved` most recently resolved first; `before` takes the previous page's
   * `next_cursor`. A flag of a target whose entry was resolved opens a new entry.
   */
  @Get()
  @ApiOperation({ operationId: 'listFlags', summary: 'List the flag review queue' })
  @ApiOkResponse({ type: FlagEntryPageDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: a bad status, limit or cursor' })
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: FlagQueueQueryDto): Promise<FlagEntryPageDto> {
    return this.reviews.list(p, q);
  }

  /**
   * Resolves an open entry: the action is carried out, the entry marked resolved and the resolution
   * written to the moderation audit trail (rule `review`), in one transaction. Resolving a resolved
   * entry changes nothing and answers it as it is.
   */
  @Post(':id/resolve')
  @HttpCode(200)
  @ApiOperation({ operationId: 'resolveFlag', summary: 'Resolve a flag review entry' })
  @ApiOkResponse({ type: FlagEntryDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: an unknown action; unsend_message on a user entry; duration_seconds with an action that is not a ban',
    404: 'NOT_FOUND: no such entry in the workspace; a ban of a message whose author was deleted',
  })
  resolve(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: ResolveFlagDto,
  ): Promise<FlagEntryDto> {
    return this.reviews.resolve(p, id, dto);
  }
}
