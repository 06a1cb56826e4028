import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE } from '../common/errors/api-errors';
import { AuditPageDto } from './dto/audit-entry.dto';
import { AuditQueryDto } from './dto/audit-query.dto';
import { ModerationAuditService } from './moderation-audit.service';

@ApiTags('moderation')
@Auth('backend')
@Controller('v1/moderation')
export class ModerationController {
  constructor(private readonly audit: ModerationAuditService) {}

  /**
   * The moderation audit trail, newest first. One entry per rule that acted on a message (action flag,
   * mask or reject), one per automatic mute (action auto_mute), and one per resolution of a flags review
   * entry (rule `review`; action dismiss, unsend_message, ban_user or shadow_ban_user; no channel for a
   * user's entry).
   */
  @Get('audit')
  @ApiOperation({ operationId: 'listModerationAudit', summary: 'List the moderation audit trail' })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiErrors({ 400: `${BAD_PAGE}; an unknown rule` })
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: AuditQueryDto): Promise<AuditPageDto> {
    return this.audit.list(p.workspaceId, q);
  }
}
