import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NO_CHANNEL } from '../common/errors/api-errors';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ChannelStateService } from './channel-state.service';
import { ChannelsService } from './channels.service';
import { ChannelStateDto, MyChannelDto, MyChannelListDto, MyChannelsQueryDto } from './dto/channel-state.dto';
import { MembersDto, RoleDto, UpdateChannelDto } from './dto/channel.dto';
import { ChannelDto } from './dto/channel-response.dto';
import { MyChannelsService } from './my-channels.service';

const ADMIN_ONLY =
  'NOT_A_MEMBER: the caller is not in the channel; FORBIDDEN: the caller is not an admin of the group';
const DIRECT_MEMBERS =
  'VALIDATION_ERROR: unknown or malformed external ids; direct channels refuse member changes';

/** End-user routes: membership and the role rules apply. */
@ApiTags('me')
@Auth('user')
@Controller('v1/me/channels')
export class MyChannelsController {
  constructor(
    private readonly channels: ChannelsService,
    private readonly mine: MyChannelsService,
    private readonly state: ChannelStateService,
  ) {}

  /**
   * The caller's channels, by last activity, with unread counts, the last message and the caller's own
   * state (muted_until, hidden, archived). Hidden and archived channels are left out unless `include` names them.
   */
  @Get()
  @ApiOperation({ operationId: 'listMyChannels', summary: "List the caller's channels" })
  @ApiOkResponse({
    type: MyChannelListDto,
    description: 'A page of the caller’s channels, newest activity first',
  })
  @ApiErrors({ 400: `${BAD_PAGE}; an include other than hidden, archived` })
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: MyChannelsQueryDto): Promise<MyChannelListDto> {
    const include = new Set(q.include?.split(','));
    return this.mine.list(p, q.limit ?? 50, q.before, {
      hidden: include.has('hidden'),
      archived: include.has('archived'),
    });
  }

  /** The caller's view of one channel: the same object as an entry of GET /v1/me/channels (hidden or archived too). */
  @Get(':id')
  @ApiOperation({ operationId: 'getMyChannel', summary: "Get the caller's view of one channel" })
  @ApiOkResponse({ type: MyChannelDto })
  @ApiErrors({ 403: 'NOT_A_MEMBER: the caller is not in the channel', 404: NO_CHANNEL })
  get(@CurrentPrincipal() p: UserPrincipal, @Param('id') id: string): Promise<MyChannelDto> {
    return this.mine.get(p, id);
  }

  /**
   * The caller's own state of the channel: mute push until a time or "forever", hide it
   * until someone else sends, archive it. Only the fields present change; answers the channel as
   * GET /v1/me/channels shows it to the caller. Other members are not affected.
   */
  @Patch(':id/state')
  @ApiOperation({
    operationId: 'setMyChannelState',
    summary: "Set the caller's state of a channel (mute, hide, archive)",
  })
  @ApiBody({ type: ChannelStateDto, required: false })
  @ApiOkResponse({
    type: MyChannelDto,
    description: 'The channel as GET /v1/me/channels shows it to the caller, with the new state',
  })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a field of the wrong type, muted_until not a time nor "forever", an unknown field',
    403: 'NOT_A_MEMBER: the caller is not a member',
    404: NO_CHANNEL,
  })
  setState(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: ChannelStateDto,
  ): Promise<MyChannelDto> {
    return this.state.set(p, id, dto);
  }

  /** Admin only (groups): name, avatar_url, frozen, slow_mode_seconds, metadata. */
  @Patch(':id')
  @ApiOperation({ operationId: 'updateMyChannel', summary: 'Update a channel as its admin' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a bad field',
    403: `${ADMIN_ONLY}; FORBIDDEN also for a direct channel's fields only the backend may change`,
    404: NO_CHANNEL,
  })
  update(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateChannelDto,
  ): Promise<ChannelDto> {
    return this.channels.update(p, id, dto);
  }

  /** Admin only. */
  @Post(':id/members')
  @HttpCode(200)
  @ApiOperation({ operationId: 'addMyChannelMembers', summary: 'Add members to a channel as its admin' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({ 400: DIRECT_MEMBERS, 403: ADMIN_ONLY, 404: NO_CHANNEL })
  addMembers(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ): Promise<ChannelDto> {
    return this.channels.addMembers(p, id, dto.member_external_ids);
  }

  /** Admin only, except that anyone may remove themselves (leave). */
  @Delete(':id/members')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'removeMyChannelMembers',
    summary: 'Remove members from a channel (or leave it)',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors({ 400: DIRECT_MEMBERS, 403: ADMIN_ONLY, 404: NO_CHANNEL })
  async removeMembers(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ): Promise<void> {
    await this.channels.removeMembers(p, id, dto.member_external_ids);
  }

  /** Admin only, except that anyone may remove themselves (leave). */
  @Delete(':id/members/:external_id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'removeMyChannelMember',
    summary: 'Remove a member from a channel (or leave it)',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors({ 400: DIRECT_MEMBERS, 403: ADMIN_ONLY, 404: NO_CHANNEL })
  async removeMember(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
  ): Promise<void> {
    await this.channels.removeMembers(p, id, [ext]);
  }

  /** Admin only: promote or demote. */
  @Patch(':id/members/:external_id')
  @ApiOperation({
    operationId: 'setMyChannelMemberRole',
    summary: "Set a member's role as the group's admin",
  })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a role that is not admin or member; a direct channel (no roles)',
    403: ADMIN_ONLY,
    404: `${NO_CHANNEL}; or the user is not a member`,
    409: 'LAST_ADMIN: demoting the last admin of the group',
  })
  setRole(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
    @Body() dto: RoleDto,
  ): Promise<ChannelDto> {
    return this.channels.setRole(p, id, ext, dto.role);
  }
}
