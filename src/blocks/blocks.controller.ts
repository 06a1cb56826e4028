import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ListQueryDto } from '../common/http/list-query.dto';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { BlockDto } from './dto/block.dto';
import { BlocksService } from './blocks.service';

/** CONTRACT §5: the caller's blocks. A block hides the blocked user's messages from the caller. */
@ApiTags('blocks')
@Auth('user')
@Controller('v1/me/blocks')
export class BlocksController {
  constructor(private readonly blocks: BlocksService) {}

  /** 201 when the block is new, 200 when it already existed. */
  @Post()
  async block(
    @CurrentPrincipal() p: UserPrincipal,
    @Body() dto: BlockDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { block, created } = await this.blocks.block(p, dto.external_id);
    res.status(created ? 201 : 200);
    return block;
  }

  @Get()
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: ListQueryDto) {
    return this.blocks.list(p, q.limit, q.before);
  }

  /** Unblock, body form. */
  @Delete()
  @HttpCode(204)
  async unblockByBody(@CurrentPrincipal() p: UserPrincipal, @Body() dto: BlockDto) {
    await this.blocks.unblock(p, dto.external_id);
  }

  @Delete(':external_id')
  @HttpCode(204)
  async unblock(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ) {
    await this.blocks.unblock(p, externalId);
  }
}
