import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NO_CHANNEL, NOT_A_MEMBER } from '../common/errors/api-errors';
import { DraftDto, DraftListDto, DraftScopeDto, MyDraftsQueryDto, SaveDraftDto } from './dto/draft.dto';
import { DraftsService } from './drafts.service';

const PRIVATE = 'FORBIDDEN: a workspace key (drafts are private to their user: user tokens only)';

/** Drafts (CONTRACT §24): the caller's own, synced across their devices. */
@ApiTags('drafts')
@Auth('user')
@Controller('v1')
export class DraftsController {
  constructor(private readonly drafts: DraftsService) {}

  /**
   * Saves the caller's draft of the channel (or of a thread, with `thread_id`): 201 when new, 200 when it
   * replaced one. Checked as a send's content is; empty or whitespace-only content without an
   * attachment deletes the draft instead (204).
   */
  @Put('channels/:id/draft')
  @ApiOperation({ operationId: 'saveDraft', summary: 'Save a draft' })
  @ApiCreatedResponse({ type: DraftDto, description: 'A new draft' })
  @ApiOkResponse({ type: DraftDto, description: 'The draft replaced the previous one' })
  @ApiNoContentResponse({ description: 'Empty content: the draft was deleted' })
  @ApiErrors({
    400: 'VALIDATION_ERROR: thread_id not a root of this channel, parent_id not in the channel, mentions of non-members, an attachment_url outside the public base URL, metadata over 4 KiB',
    403: `${NOT_A_MEMBER}; ${PRIVATE}`,
    404: NO_CHANNEL,
    413: 'MESSAGE_TOO_LARGE: content over the message size limit',
  })
  async save(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: SaveDraftDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DraftDto | undefined> {
    const saved = await this.drafts.save(p, id, dto);
    res.status(saved ? (saved.created ? 201 : 200) : 204);
    return saved?.draft;
  }

  /** The caller's draft of the channel (or of the thread `thread_id`). */
  @Get('channels/:id/draft')
  @ApiOperation({ operationId: 'getDraft', summary: 'Get a draft' })
  @ApiOkResponse({ type: DraftDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a malformed thread_id',
    403: `${NOT_A_MEMBER}; ${PRIVATE}`,
    404: `${NO_CHANNEL}; NOT_FOUND: no draft there`,
  })
  get(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Query() q: DraftScopeDto,
  ): Promise<DraftDto> {
    return this.drafts.get(p, id, q.thread_id);
  }

  /** Deletes the caller's draft of the channel (or thread): 204, also when there was none. */
  @Delete('channels/:id/draft')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteDraft', summary: 'Delete a draft' })
  @ApiNoContentResponse({ description: 'Deleted, or there was none' })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a malformed thread_id',
    403: `${NOT_A_MEMBER}; ${PRIVATE}`,
    404: NO_CHANNEL,
  })
  async delete(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Query() q: DraftScopeDto,
  ): Promise<void> {
    await this.drafts.delete(p, id, q.thread_id);
  }

  /** The caller's drafts, most recently updated first. */
  @Get('me/drafts')
  @ApiOperation({ operationId: 'listMyDrafts', summary: "List the caller's drafts" })
  @ApiOkResponse({ type: DraftListDto })
  @ApiErrors({
    400: BAD_PAGE,
    403: `${NOT_A_MEMBER} (the channel filter); ${PRIVATE}`,
    404: NO_CHANNEL,
  })
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: MyDraftsQueryDto): Promise<DraftListDto> {
    return this.drafts.list(p, q);
  }
}
