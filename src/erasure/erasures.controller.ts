import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors } from '../common/errors/api-errors';
import { ErasureDto } from './dto/erasure.dto';
import { ErasureService } from './erasure.service';

/** the state of a user erasure the request answered 202 for (backend key only). */
@ApiTags('users')
@Auth('backend')
@Controller('v1/erasures')
export class ErasuresController {
  constructor(private readonly erasures: ErasureService) {}

  /** How far the erasure job is: `pending` with the messages erased so far, then `done`. */
  @Get(':id')
  @ApiOperation({ operationId: 'getErasure', summary: 'Get the progress of a user erasure' })
  @ApiOkResponse({ type: ErasureDto })
  @ApiErrors({ 404: 'NOT_FOUND: no such erasure in the workspace' })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string): Promise<ErasureDto> {
    return this.erasures.get(p.workspaceId, id);
  }
}
