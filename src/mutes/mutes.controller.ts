import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_EXTERNAL_ID, NO_USER } from '../common/errors/api-errors';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { MuteDto, MuteViewDto } from './dto/mute.dto';
import { MutesService } from './mutes.service';

/** workspace-wide posting mutes, set by the backend. */
@ApiTags('mutes')
@Auth('backend')
@Controller('v1/users/:external_id/mute')
export class MutesController {
  constructor(private readonly mutes: MutesService) {}

  /** Mutes the user in every channel, for `duration_seconds` or until lifted. */
  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'muteUser', summary: 'Mute a user workspace-wide' })
  @ApiBody({ type: MuteDto, required: false })
  @ApiOkResponse({ type: MuteViewDto })
  @ApiErrors({ 400: `${BAD_EXTERNAL_ID}; a bad duration_seconds or reason`, 404: NO_USER })
  mute(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: MuteDto,
  ): Promise<MuteViewDto> {
    return this.mutes.mute(p.workspaceId, externalId, dto);
  }

  /** Lifts the mute (204, also when there was none). */
  @Delete()
  @HttpCode(204)
  @ApiOperation({ operationId: 'unmuteUser', summary: 'Lift a mute' })
  @ApiNoContentResponse({ description: 'Lifted' })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  async unmute(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<void> {
    await this.mutes.unmute(p.workspaceId, externalId);
  }
}
