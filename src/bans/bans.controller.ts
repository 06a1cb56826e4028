import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_EXTERNAL_ID, BAD_PAGE, NO_CHANNEL, NO_USER } from '../common/errors/api-errors';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { BansService } from './bans.service';
import { BanDto, BanListDto, BanListQueryDto, BanViewDto, ChannelBanDto } from './dto/ban.dto';

const BAD_BAN = 'VALIDATION_ERROR: a reason over 500 characters, a duration_seconds out of range';
const ADMIN_ONLY =
  'FORBIDDEN: the caller is not an admin of the group (bans are set in groups); NOT_A_MEMBER: the caller is not in the channel';

/**
 * bans. A banned user's sends, edits and reactions are 403 BANNED (everywhere for a
 * workspace ban, which also refuses and closes their sockets); a shadow ban lets them send but shows
 * their messages to nobody else. Banning again replaces reason, expiry and kind.
 */
@ApiTags('bans')
@Controller('v1')
export class BansController {
  constructor(private readonly bans: BansService) {}

  /** Bans the user workspace-wide (200 with the ban), for `duration_seconds` or until lifted. Fires `user.banned`. */
  @Post('users/:external_id/ban')
  @HttpCode(200)
  @Auth('backend')
  @ApiOperation({ operationId: 'banUser', summary: 'Ban a user workspace-wide' })
  @ApiBody({ type: BanDto, required: false })
  @ApiOkResponse({ type: BanViewDto })
  @ApiErrors({ 400: `${BAD_EXTERNAL_ID}; ${BAD_BAN}`, 404: NO_USER })
  banUser(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: BanDto,
  ): Promise<BanViewDto> {
    return this.bans.banUser(p.workspaceId, externalId, dto);
  }

  /** Lifts the workspace-wide ban (204, also when there was none). Fires `user.unbanned` when one was in force. */
  @Delete('users/:external_id/ban')
  @HttpCode(204)
  @Auth('backend')
  @ApiOperation({ operationId: 'unbanUser', summary: 'Lift a workspace-wide ban' })
  @ApiNoContentResponse({ description: 'Lifted' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  async unbanUser(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<void> {
    await this.bans.unbanUser(p.workspaceId, externalId);
  }

  /** Bans in force, newest first; `channel` narrows to one channel's bans. */
  @Get('bans')
  @Auth('backend')
  @ApiOperation({ operationId: 'listBans', summary: 'List bans in force' })
  @ApiOkResponse({ type: BanListDto })
  @ApiErrors({ 400: BAD_PAGE })
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: BanListQueryDto): Promise<BanListDto> {
    return this.bans.list(p.workspaceId, q);
  }

  /** Bans the user from the channel (200 with the ban). Fires `user.banned` with `channel_id`. */
  @Post('channels/:id/bans')
  @HttpCode(200)
  @Auth('backend')
  @ApiOperation({ operationId: 'banUserInChannel', summary: 'Ban a user from a channel' })
  @ApiOkResponse({ type: BanViewDto })
  @ApiErrors({ 400: `VALIDATION_ERROR: an unknown user_external_id; ${BAD_BAN}`, 404: NO_CHANNEL })
  banInChannel(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') channelRef: string,
    @Body() dto: ChannelBanDto,
  ): Promise<BanViewDto> {
    return this.bans.banInChannel(p, channelRef, dto);
  }

  /** Lifts the user's ban from the channel (204, also when there was none). */
  @Delete('channels/:id/bans/:external_id')
  @HttpCode(204)
  @Auth('backend')
  @ApiOperation({ operationId: 'unbanUserInChannel', summary: "Lift a user's ban from a channel" })
  @ApiNoContentResponse({ description: 'Lifted' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: `${NO_CHANNEL}; or no such user` })
  async unbanInChannel(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') channelRef: string,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<void> {
    await this.bans.unbanInChannel(p, channelRef, externalId);
  }

  /** A group admin bans a user from their group (200 with the ban). */
  @Post('me/channels/:id/bans')
  @HttpCode(200)
  @Auth('user')
  @ApiOperation({ operationId: 'banUserInMyChannel', summary: 'Ban a user from a group as its admin' })
  @ApiOkResponse({ type: BanViewDto })
  @ApiErrors({
    400: `VALIDATION_ERROR: an unknown user_external_id, or yourself; ${BAD_BAN}`,
    403: ADMIN_ONLY,
    404: NO_CHANNEL,
  })
  banInMyChannel(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') channelRef: string,
    @Body() dto: ChannelBanDto,
  ): Promise<BanViewDto> {
    return this.bans.banInChannel(p, channelRef, dto);
  }

  /** A group admin lifts a ban from their group (204). */
  @Delete('me/channels/:id/bans/:external_id')
  @HttpCode(204)
  @Auth('user')
  @ApiOperation({
    operationId: 'unbanUserInMyChannel',
    summary: "Lift a user's ban from a group as its admin",
  })
  @ApiNoContentResponse({ description: 'Lifted' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 403: ADMIN_ONLY, 404: `${NO_CHANNEL}; or no such user` })
  async unbanInMyChannel(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('id') channelRef: string,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<void> {
    await this.bans.unbanInChannel(p, channelRef, externalId);
  }
}
