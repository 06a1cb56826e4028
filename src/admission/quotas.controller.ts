import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { ApiErrors } from '../common/errors/api-errors';
import { uuidParam } from '../common/http/uuid-param';
import { PatchWorkspaceQuotasDto, WorkspaceQuotasDto } from './dto/workspace-quotas.dto';
import { WorkspaceQuotas } from './workspace-quotas';

const uuid404 = uuidParam('Workspace');
const NO_WORKSPACE = 'NOT_FOUND: no such workspace (also SERVICE_ADMIN_TOKEN unset)';

@ApiTags('admin')
@Auth('admin')
@Controller('v1/admin/workspaces/:id/quotas')
export class AdminQuotasController {
  constructor(private readonly quotas: WorkspaceQuotas) {}

  /** The quotas in force for the workspace, and which of them are its own. */
  @Get()
  @ApiOperation({ operationId: 'getWorkspaceQuotas', summary: "A workspace's quotas" })
  @ApiOkResponse({ type: WorkspaceQuotasDto })
  @ApiErrors({ 404: NO_WORKSPACE })
  get(@Param('id', uuid404) id: string): Promise<WorkspaceQuotasDto> {
    return this.quotas.describe(id);
  }

  /** Sets or clears some of the workspace's quotas; every instance applies them within a second. */
  @Patch()
  @ApiOperation({ operationId: 'updateWorkspaceQuotas', summary: "Set a workspace's quotas" })
  @ApiOkResponse({ type: WorkspaceQuotasDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a quota that is not a whole number within its bounds',
    404: NO_WORKSPACE,
  })
  update(
    @Param('id', uuid404) id: string,
    @Body() dto: PatchWorkspaceQuotasDto,
  ): Promise<WorkspaceQuotasDto> {
    return this.quotas.update(id, dto);
  }
}
