import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors } from '../common/errors/api-errors';
import { uuidParam } from '../common/http/uuid-param';
import { ListQueryDto } from '../common/http/list-query.dto';
import { PatchWorkspaceSettingsDto, WorkspaceSettingsDto } from './dto/workspace-settings.dto';
import {
  CreatedWorkspaceDto,
  CreateWorkspaceDto,
  RotateSecretDto,
  WorkspaceDto,
  WorkspaceKeyPairDto,
  WorkspaceListDto,
} from './dto/workspace.dto';
import { WorkspacesService } from './workspaces.service';

const uuid404 = uuidParam('Workspace');

@ApiTags('admin')
@Auth('admin')
@Controller('v1/admin/workspaces')
export class AdminWorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  /** Creates a workspace; the answer carries its api_secret, shown only once. */
  @Post()
  @ApiOperation({ operationId: 'createWorkspace', summary: 'Create a workspace' })
  @ApiCreatedResponse({ type: CreatedWorkspaceDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: a name that is not 1-200 characters' })
  create(@Body() dto: CreateWorkspaceDto): Promise<CreatedWorkspaceDto> {
    return this.workspaces.create(dto.name);
  }

  /** Newest first. */
  @Get()
  @ApiOperation({ operationId: 'listWorkspaces', summary: 'List workspaces' })
  @ApiOkResponse({ type: WorkspaceListDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: a bad limit or cursor' })
  list(@Query() q: ListQueryDto): Promise<WorkspaceListDto> {
    return this.workspaces.list(q.limit ?? 50, q.before);
  }

  /** Deletes a workspace and everything in it. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWorkspace', summary: 'Delete a workspace and everything in it' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({ 404: 'NOT_FOUND: no such workspace (also SERVICE_ADMIN_TOKEN unset)' })
  async remove(@Param('id', uuid404) id: string): Promise<void> {
    await this.workspaces.delete(id);
  }
}

@ApiTags('workspace')
@Auth('backend')
@Controller('v1/workspace')
export class WorkspaceController {
  constructor(private readonly workspaces: WorkspacesService) {}

  /** The calling workspace with its effective settings. */
  @Get()
  @ApiOperation({ operationId: 'getWorkspace', summary: 'Get the calling workspace' })
  @ApiOkResponse({ type: WorkspaceDto })
  get(@CurrentPrincipal() p: BackendPrincipal): Promise<WorkspaceDto> {
    return this.workspaces.get(p.workspaceId);
  }

  /** Deep-merges a partial settings object and answers the whole settings. */
  @Patch('settings')
  @ApiOperation({ operationId: 'updateWorkspaceSettings', summary: 'Update workspace settings' })
  @ApiOkResponse({ type: WorkspaceSettingsDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: an unknown field, or a value of the wrong type or out of range' })
  patchSettings(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: PatchWorkspaceSettingsDto,
  ): Promise<WorkspaceSettingsDto> {
    return this.workspaces.patchSettings(p.workspaceId, dto);
  }

  /** Issues a new key pair; the old one keeps working for grace_seconds. */
  @Post('rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWorkspaceSecret', summary: 'Rotate the workspace key pair' })
  @ApiBody({ type: RotateSecretDto, required: false })
  @ApiOkResponse({ type: WorkspaceKeyPairDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: grace_seconds outside 0-86400' })
  rotate(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: RotateSecretDto,
  ): Promise<WorkspaceKeyPairDto> {
    return this.workspaces.rotateSecret(p.workspaceId, dto.grace_seconds ?? 0);
  }
}
