import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { uuidParam } from '../common/http/uuid-param';
import { ListQueryDto } from '../common/http/list-query.dto';
import { PatchWorkspaceSettingsDto } from './dto/workspace-settings.dto';
import { CreateWorkspaceDto, RotateSecretDto } from './dto/workspace.dto';
import { WorkspacesService } from './workspaces.service';

const uuid404 = uuidParam('Workspace');

@ApiTags('admin')
@Auth('admin')
@Controller('v1/admin/workspaces')
export class AdminWorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  /** Creates a workspace; the answer carries its api_secret, shown only once. */
  @Post()
  create(@Body() dto: CreateWorkspaceDto) {
    return this.workspaces.create(dto.name);
  }

  @Get()
  list(@Query() q: ListQueryDto) {
    return this.workspaces.list(q.limit ?? 50, q.before);
  }

  /** Deletes a workspace and everything in it. */
  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id', uuid404) id: string): Promise<void> {
    await this.workspaces.delete(id);
  }
}

@ApiTags('workspace')
@Auth('backend')
@Controller('v1/workspace')
export class WorkspaceController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Get()
  get(@CurrentPrincipal() p: BackendPrincipal) {
    return this.workspaces.get(p.workspaceId);
  }

  /** Deep-merges a partial settings object and answers the whole settings. */
  @Patch('settings')
  patchSettings(@CurrentPrincipal() p: BackendPrincipal, @Body() dto: PatchWorkspaceSettingsDto) {
    return this.workspaces.patchSettings(p.workspaceId, dto);
  }

  /** Issues a new key pair; the old one keeps working for grace_seconds. */
  @Post('rotate-secret')
  @HttpCode(200)
  rotate(@CurrentPrincipal() p: BackendPrincipal, @Body() dto: RotateSecretDto) {
    return this.workspaces.rotateSecret(p.workspaceId, dto.grace_seconds ?? 0);
  }
}
