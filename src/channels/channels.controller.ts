import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import {
  ChannelDto,
  ChannelListDto,
  ChannelPresenceDto,
  ChannelPresenceQueryDto,
} from './dto/channel-response.dto';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, NO_CHANNEL, NOT_A_MEMBER } from '../common/errors/api-errors';
import { LIMIT_PROPERTY } from '../common/http/list-query.dto';
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

const NO_MEMBER = `${NO_CHANNEL}; or the user is not a member`;
const DIRECT_MEMBERS =
  'VALIDATION_ERROR: unknown or malformed external ids; direct channels refuse member changes';

/** Backend routes: a workspace key, no role checks. */
@ApiTags('channels')
@Controller('v1/channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  /** Creates a channel (201); an existing direct channel for the same pair answers 200. */
  @Post()
  @Auth('backend')
  @ApiOperation({ operationId: 'createChannel', summary: 'Create a channel' })
  @ApiCreatedResponse({ type: ChannelDto, description: 'The new channel' })
  @ApiOkResponse({ type: ChannelDto, description: 'The direct channel of that pair already existed' })
  @ApiErrors({
    400: 'VALIDATION_ERROR: unknown member or creator ids (named), a direct channel without exactly two users, an external_id in use, metadata over 4 KiB',
  })
  async create(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: CreateChannelDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ChannelDto> {
    const { channel, created } = await this.channels.create(p.workspaceId, dto);
    res.status(created ? 201 : 200);
    return channel;
  }

  @Get()
  @Auth('backend')
  @ApiOperation({
    operationId: 'listChannels',
    summary: 'List channels (newest first)',
    description: `Filters combine: \`member\`, \`type\`, and up to ${MAX_METADATA_FILTERS} \`metadata.<key>=<value>\` parameters (channels whose metadata has that top-level key with exactly that string value), e.g. \`GET /v1/channels?metadata.team=red&type=group\`.`,
  })
  @ApiOkResponse({ type: ChannelListDto })
  @ApiQuery({
    name: 'member',
    required: false,
    type: String,
    description: 'Only channels this user (external id) belongs to.',
  })
  @ApiQuery({ name: 'type', required: false, enum: ['direct', 'group'] })
  @ApiQuery({ name: 'limit', required: false, schema: LIMIT_PROPERTY })
  @ApiQuery({
    name: 'before',
    required: false,
    type: String,
    description: 'The next_cursor of the previous page.',
  })
  @ApiErrors({
    400: `VALIDATION_ERROR: a bad limit, type or cursor, an unknown parameter, more than ${MAX_METADATA_FILTERS} metadata filters`,
  })
  list(
    @CurrentPrincipal() p: BackendPrincipal,
    @Query(ChannelListQueryPipe) q: ChannelListQuery,
  ): Promise<ChannelListDto> {
    return this.channels.list(p.workspaceId, q);
  }

  @Get(':id')
  @Auth('backend')
  @ApiOperation({ operationId: 'getChannel', summary: 'Get a channel' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({ 404: NO_CHANNEL })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string): Promise<ChannelDto> {
    return this.channels.get(p.workspaceId, id);
  }

  /** name, avatar_url (groups), frozen, slow_mode_seconds (groups), metadata. Fires `channel.updated`. */
  @Patch(':id')
  @Auth('backend')
  @ApiOperation({ operationId: 'updateChannel', summary: 'Update a channel' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a bad field; avatar_url or slow_mode_seconds on a direct channel',
    404: NO_CHANNEL,
  })
  update(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateChannelDto,
  ): Promise<ChannelDto> {
    return this.channels.update(p, id, dto);
  }

  /** Permanent: memberships, messages, reactions and receipts go with it. */
  @Delete(':id')
  @Auth('backend')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteChannel', summary: 'Delete a channel' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({ 404: NO_CHANNEL })
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string): Promise<void> {
    await this.channels.delete(p, id);
  }

  /** Adding an existing member changes nothing. Answers the channel. */
  @Post(':id/members')
  @Auth('backend')
  @HttpCode(200)
  @ApiOperation({ operationId: 'addChannelMembers', summary: 'Add members to a channel' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({ 400: DIRECT_MEMBERS, 404: NO_CHANNEL })
  addMembers(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ): Promise<ChannelDto> {
    return this.channels.addMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members')
  @Auth('backend')
  @HttpCode(204)
  @ApiOperation({ operationId: 'removeChannelMembers', summary: 'Remove members from a channel' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors({ 400: DIRECT_MEMBERS, 404: NO_CHANNEL })
  async removeMembers(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ): Promise<void> {
    await this.channels.removeMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members/:external_id')
  @Auth('backend')
  @HttpCode(204)
  @ApiOperation({ operationId: 'removeChannelMember', summary: 'Remove a member from a channel' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors({ 400: DIRECT_MEMBERS, 404: NO_CHANNEL })
  async removeMember(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
  ): Promise<void> {
    await this.channels.removeMembers(p, id, [ext]);
  }

  @Patch(':id/members/:external_id')
  @Auth('backend')
  @ApiOperation({ operationId: 'setChannelMemberRole', summary: "Set a member's role" })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a role that is not admin or member; a direct channel (no roles)',
    404: NO_MEMBER,
    409: 'LAST_ADMIN: demoting the last admin of the group',
  })
  setRole(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
    @Body() dto: RoleDto,
  ): Promise<ChannelDto> {
    return this.channels.setRole(p, id, ext, dto.role);
  }

  /** Members with their role and presence, a page at a time: online members first, each group by external_id. */
  @Get(':id/presence')
  @Auth('any')
  @ApiOperation({ operationId: 'getChannelPresence', summary: "Get the channel members' presence" })
  @ApiOkResponse({ type: ChannelPresenceDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a limit outside 1-200, a bad cursor',
    403: NOT_A_MEMBER,
    404: NO_CHANNEL,
  })
  presence(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() q: ChannelPresenceQueryDto,
  ): Promise<ChannelPresenceDto> {
    return this.channels.presence(p, id, q.limit ?? 100, q.cursor);
  }
}
