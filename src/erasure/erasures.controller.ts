import { Controller, Get, Param } from '@nestjs/common';
import {
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { ErasureDto } from './dto/erasure.dto';
import { ErasureService } from './erasure.service';

/** CONTRACT §20: the state of a user erasure the request answered 202 for (backend key only). */
@ApiTags('users')
@Auth('backend')
@Controller('v1/erasures')
export class ErasuresController {
  constructor(private readonly erasures: ErasureService) {}

  /** How far the erasure job is: `pending` with the messages erased so far, then `done`. */
  @Get(':id')
  @ApiOkResponse({ type: ErasureDto })
  @ApiUnauthorizedResponse({
    type: ErrorResponseDto,
    description: 'UNAUTHORIZED: missing or invalid credentials',
  })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'FORBIDDEN: a user token (erasures take the workspace key)',
  })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such erasure in the workspace' })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string): Promise<ErasureDto> {
    return this.erasures.get(p.workspaceId, id);
  }
}
