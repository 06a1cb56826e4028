import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ListQueryDto } from '../common/http/list-query.dto';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ChannelsService } from './channels.service';
import { MembersDto, RoleDto, UpdateChannelDto } from './dto/channel.dto';
import { MyChannelsService } from './my-channels.service';

/** End-user routes: membership and SPEC.md's role rules apply. */
@ApiTags('me')
@Auth('user')
@Controller('v1/me/channels')
export class MyChannelsController {
  constructor(
    private readonly channels: ChannelsService,
    private readonly mine: MyChannelsService,
  ) {}

  /** The caller's channels, by last activity, with unread counts and the last message. */
  @Get()
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: ListQueryDto) {
    return this.mine.list(p, q.limit ?? 50, q.before);
  }

  /** Admin only. */
  @Patch(':id')
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
