import { applyDecorators, Body, Controller, Param, Post, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, ErrorStatus } from '../common/errors/api-errors';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { CreateFlagDto } from './dto/flag.dto';
import { FlagDto } from './dto/flag-response.dto';
import { FlagResult, FlagsService } from './flags.service';
import type { FlagView } from './flags.repository';

function FlagResponses(self: string, notFound: string, more: Partial<Record<ErrorStatus, string>> = {}) {
  return applyDecorators(
    ApiBody({ type: CreateFlagDto, required: false }),
    ApiCreatedResponse({ type: FlagDto, description: 'The new flag' }),
    ApiOkResponse({ type: FlagDto, description: 'The reporter had already flagged the target: that flag' }),
    ApiErrors({
      400: `VALIDATION_ERROR: ${self}; a reason over 500 characters; a backend key without user_external_id`,
      404: `NOT_FOUND: ${notFound}`,
      ...more,
    }),
  );
}

/**
 * reports. A user JWT, or a backend key on behalf of `user_external_id`. 201 with the
 * flag; 200 with the earlier flag when the reporter had already flagged the target (one flag per
 * reporter and target, ever).
 */
@ApiTags('flags')
@Controller('v1')
export class FlagsController {
  constructor(private readonly flags: FlagsService) {}

  /** Flags a message of a channel the reporter belongs to. */
  @Post('messages/:id/flag')
  @Auth('any')
  @ApiOperation({ operationId: 'flagMessage', summary: 'Flag (report) a message' })
  @FlagResponses(
    'the reporter’s own message, or a system message',
    'no such message in a channel the reporter belongs to',
    { 422: 'MESSAGE_DELETED: the message was unsent' },
  )
  async flagMessage(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: CreateFlagDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<FlagDto> {
    return answer(res, await this.flags.flagMessage(p, id, dto));
  }

  /** Flags a user who shares a channel with the reporter. */
  @Post('users/:external_id/flag')
  @Auth('any')
  @ApiOperation({ operationId: 'flagUser', summary: 'Flag (report) a user' })
  @FlagResponses('the reporter themselves', 'no such user sharing a channel with the reporter')
  async flagUser(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: CreateFlagDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<FlagDto> {
    return answer(res, await this.flags.flagUser(p, externalId, dto));
  }
}

function answer(res: Response, result: FlagResult): FlagView {
  res.status(result.created ? 201 : 200);
  return result.flag;
}
