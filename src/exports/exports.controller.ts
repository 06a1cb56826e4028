import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { uuidParam } from '../common/http/uuid-param';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ExportDto, ExportRequestedDto } from './dto/export.dto';
import { ExportsService } from './exports.service';

const EXPORT_ID = uuidParam('Export');
const UNAUTHORIZED = 'UNAUTHORIZED: missing or invalid credentials';
const FORBIDDEN = 'FORBIDDEN: a user token (exports take the workspace key)';

/** CONTRACT §20: user data exports (the backend key only). */
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
  @ApiAcceptedResponse({ type: ExportRequestedDto })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto, description: UNAUTHORIZED })
  @ApiForbiddenResponse({ type: ErrorResponseDto, description: FORBIDDEN })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such user in the workspace' })
  request(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<ExportRequestedDto> {
    return this.exports.request(p.workspaceId, externalId);
  }

  /** The export's state; once ready, a `download_url` signed afresh on every call. */
  @Get('exports/:id')
  @ApiOkResponse({ type: ExportDto })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto, description: UNAUTHORIZED })
  @ApiForbiddenResponse({ type: ErrorResponseDto, description: FORBIDDEN })
  @ApiNotFoundResponse({
    type: ErrorResponseDto,
    description:
      "NOT_FOUND: no such export in the workspace (another workspace's, or deleted after expires_at)",
  })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id', EXPORT_ID) id: string): Promise<ExportDto> {
    return this.exports.get(p.workspaceId, id);
  }
}
