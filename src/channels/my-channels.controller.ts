import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ChannelStateService } from './channel-state.service';
import { ChannelsService } from './channels.service';
import { ChannelStateDto, MyChannelDto, MyChannelListDto, MyChannelsQueryDto } from './dto/channel-state.dto';
import { MembersDto, RoleDto, UpdateChannelDto } from './dto/channel.dto';
import { ChannelDto } from './dto/channel-response.dto';
import { MyChannelsService } from './my-channels.service';

/** End-user routes: membership and SPEC.md's role rules apply. */
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
  @ApiOkResponse({ type: MyChannelListDto, description: 'A page of the caller’s channels, newest activity first' })
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: MyChannelsQueryDto) {
    const include = new Set(q.include?.split(','));
    return this.mine.list(p, q.limit ?? 50, q.before, { hidden: include.has('hidden'), archived: include.has('archived') });
  }

  /**
   * The caller's own state of the channel (CONTRACT §18): mute push until a time or "forever", hide it
   * until someone else sends, archive it. Only the fields present change; answers the channel as
   * GET /v1/me/channels shows it to the caller. Other members are not affected.
   */
  @Patch(':id/state')
  @ApiOkResponse({ type: MyChannelDto, description: 'The channel as GET /v1/me/channels shows it to the caller, with the new state' })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR: a field of the wrong type, muted_until not a time nor "forever", an unknown field' })
  @ApiForbiddenResponse({ description: 'NOT_A_MEMBER: the caller is not a member; FORBIDDEN: a workspace key (user JWT only)' })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no such channel in the workspace' })
  setState(@CurrentPrincipal() p: UserPrincipal, @Param('id') id: string, @Body() dto: ChannelStateDto) {
    return this.state.set(p, id, dto);
  }

  /** Admin only (groups): name, avatar_url, frozen, slow_mode_seconds, metadata. */
  @Patch(':id')
  @ApiOkResponse({ type: ChannelDto })
  update(@CurrentPrincipal() p: UserPrincipal, @Param('id') id: string, @Body() dto: UpdateChannelDto) {
    return this.channels.update(p, id, dto);
  }

  /** Admin only. */
  @Post(':id/members')
  @HttpCode(200)
  addMembers(@CurrentPrincipal() p: UserPrincipal, @Param('id') id: string, @Body() dto: MembersDto) {
    return this.channels.addMembers(p, id, dto.member_external_ids);
  }

  /** Admin only, except that anyone may remove themselves (leave). */
  @Delete(':id/members')
  @HttpCode(204)
  async removeMembers(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ) {
    await this.channels.removeMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members/:external_id')
  @HttpCode(204)
  async removeMember(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
  ) {
    await this.channels.removeMembers(p, id, [ext]);
  }

  /** Admin only: promote or demote. */
  @Patch(':id/members/:external_id')
  setRole(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
    @Body() dto: RoleDto,
  ) {
    return this.channels.setRole(p, id, ext, dto.role);
  }
}
