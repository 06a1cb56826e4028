import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors } from '../common/errors/api-errors';
import { uuidParam } from '../common/http/uuid-param';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ExportDto, ExportRequestedDto } from './dto/export.dto';
import { ExportsService } from './exports.service';

const EXPORT_ID = uuidParam('Export');

/** user data exports (the backend key only). */
@ApiTags('exports')
@Auth('backend')
@Controller('v1')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  /**
   * Requests an export of everything the user wrote and set up: 202 with a pending export, built by a
   * worker. While one is pending for the user, a new request answers that one.
   */
  @Post('users/:external_id/exports')
  @HttpCode(202)
  @ApiOperation({ operationId: 'requestUserExport', summary: "Request an export of a user's data" })
  @ApiAcceptedResponse({ type: ExportRequestedDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: the external_id is not 1-128 characters without spaces, slashes, ?, # or %',
    404: 'NOT_FOUND: no such user in the workspace',
  })
  request(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<ExportRequestedDto> {
    return this.exports.request(p.workspaceId, externalId);
  }

  /** The export's state; once ready, a `download_url` signed afresh on every call. */
  @Get('exports/:id')
  @ApiOperation({ operationId: 'getExport', summary: 'Get an export and its download URL' })
  @ApiOkResponse({ type: ExportDto })
  @ApiErrors({
    404: "NOT_FOUND: no such export in the workspace (another workspace's, or deleted after expires_at)",
  })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id', EXPORT_ID) id: string): Promise<ExportDto> {
    return this.exports.get(p.workspaceId, id);
  }
}
