import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
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
import { ApiErrors, BAD_EXTERNAL_ID, BAD_PAGE, NO_USER } from '../common/errors/api-errors';
import { ListQueryDto } from '../common/http/list-query.dto';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { BlockDto, BlockPageDto, BlockViewDto } from './dto/block.dto';
import { BlocksService } from './blocks.service';

/** the caller's blocks. A block hides the blocked user's messages from the caller. */
@ApiTags('blocks')
@Auth('user')
@Controller('v1/me/blocks')
export class BlocksController {
  constructor(private readonly blocks: BlocksService) {}

  /** 201 when the block is new, 200 when it already existed. */
  @Post()
  @ApiOperation({ operationId: 'blockUser', summary: 'Block a user' })
  @ApiCreatedResponse({ type: BlockViewDto, description: 'The new block' })
  @ApiOkResponse({ type: BlockViewDto, description: 'The caller had already blocked the user' })
  @ApiErrors({ 400: `${BAD_EXTERNAL_ID}; blocking yourself`, 404: NO_USER })
  async block(
    @CurrentPrincipal() p: UserPrincipal,
    @Body() dto: BlockDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BlockViewDto> {
    const { block, created } = await this.blocks.block(p, dto.external_id);
    res.status(created ? 201 : 200);
    return block;
  }

  /** Newest first. */
  @Get()
  @ApiOperation({ operationId: 'listMyBlocks', summary: "List the caller's blocks" })
  @ApiOkResponse({ type: BlockPageDto })
  @ApiErrors({ 400: BAD_PAGE })
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: ListQueryDto): Promise<BlockPageDto> {
    return this.blocks.list(p, q.limit, q.before);
  }

  /** Unblock, body form. Unblocking someone who is not blocked is fine. */
  @Delete()
  @HttpCode(204)
  @ApiOperation({ operationId: 'unblockUserByBody', summary: 'Unblock a user (body form)' })
  @ApiNoContentResponse({ description: 'Unblocked' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  async unblockByBody(@CurrentPrincipal() p: UserPrincipal, @Body() dto: BlockDto): Promise<void> {
    await this.blocks.unblock(p, dto.external_id);
  }

  /** Unblocking someone who is not blocked is fine. */
  @Delete(':external_id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'unblockUser', summary: 'Unblock a user' })
  @ApiNoContentResponse({ description: 'Unblocked' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  async unblock(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<void> {
    await this.blocks.unblock(p, externalId);
  }
}
