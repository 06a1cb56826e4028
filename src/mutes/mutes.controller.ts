import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { MuteDto } from './dto/mute.dto';
import { MutesService } from './mutes.service';

/** CONTRACT §5: workspace-wide posting mutes, set by the backend. */
@ApiTags('mutes')
@Auth('backend')
@Controller('v1/users/:external_id/mute')
export class MutesController {
  constructor(private readonly mutes: MutesService) {}

  /** Mutes the user in every channel, for `duration_seconds` or until lifted. */
  @Post()
  @HttpCode(200)
  mute(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: MuteDto,
  ) {
    return this.mutes.mute(p.workspaceId, externalId, dto);
  }

  @Delete()
  @HttpCode(204)
  async unmute(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ) {
    await this.mutes.unmute(p.workspaceId, externalId);
  }
}
