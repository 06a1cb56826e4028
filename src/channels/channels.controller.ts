import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ChannelDto, ChannelListDto } from './dto/channel-response.dto';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ChannelListQuery, ChannelListQueryPipe } from './channel-list-query.pipe';
import { ChannelsService } from './channels.service';
import {
  CreateChannelDto,
  MAX_METADATA_FILTERS,
  MembersDto,
  RoleDto,
  UpdateChannelDto,
} from './dto/channel.dto';

/** Backend routes: a workspace key, no role checks. */
@ApiTags('channels')
@Controller('v1/channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  /** Creates a channel (201); an existing direct channel for the same pair answers 200. */
  @Post()
  @Auth('backend')
  @ApiCreatedResponse({ type: ChannelDto })
  @ApiOkResponse({ type: ChannelDto, description: 'The direct channel of that pair already existed' })
  async create(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: CreateChannelDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { channel, created } = await this.channels.create(p.workspaceId, dto);
    res.status(created ? 201 : 200);
    return channel;
  }

  @Get()
  @Auth('backend')
  @ApiOkResponse({ type: ChannelListDto })
  @ApiQuery({ name: 'member', required: false, description: 'Only channels this user (external id) belongs to.' })
  @ApiQuery({ name: 'type', required: false, enum: ['direct', 'group'] })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } })
  @ApiQuery({ name: 'before', required: false, description: 'The next_cursor of the previous page.' })
  @ApiOperation({
    summary: 'List channels (newest first)',
    description: `Filters combine: \`member\`, \`type\`, and up to ${MAX_METADATA_FILTERS} \`metadata.<key>=<value>\` parameters (channels whose metadata has that top-level key with exactly that string value), e.g. \`GET /v1/channels?metadata.team=red&type=group\`.`,
  })
  list(@CurrentPrincipal() p: BackendPrincipal, @Query(ChannelListQueryPipe) q: ChannelListQuery) {
    return this.channels.list(p.workspaceId, q);
  }

  @Get(':id')
  @Auth('backend')
  @ApiOkResponse({ type: ChannelDto })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string) {
    return this.channels.get(p.workspaceId, id);
  }

  @Patch(':id')
  @Auth('backend')
  @ApiOkResponse({ type: ChannelDto })
  update(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string, @Body() dto: UpdateChannelDto) {
    return this.channels.update(p, id, dto);
  }

  /** Permanent: memberships, messages, reactions and receipts go with it. */
  @Delete(':id')
  @Auth('backend')
  @HttpCode(204)
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string) {
    await this.channels.delete(p, id);
  }

  @Post(':id/members')
  @Auth('backend')
  @HttpCode(200)
  addMembers(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string, @Body() dto: MembersDto) {
    return this.channels.addMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members')
  @Auth('backend')
  @HttpCode(204)
  async removeMembers(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ) {
    await this.channels.removeMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members/:external_id')
  @Auth('backend')
  @HttpCode(204)
  async removeMember(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
  ) {
    await this.channels.removeMembers(p, id, [ext]);
  }

  @Patch(':id/members/:external_id')
  @Auth('backend')
  setRole(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
    @Body() dto: RoleDto,
  ) {
    return this.channels.setRole(p, id, ext, dto.role);
  }

  /** Members with their role and presence. */
  @Get(':id/presence')
  @Auth('any')
  presence(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string) {
    return this.channels.presence(p, id);
  }
}
