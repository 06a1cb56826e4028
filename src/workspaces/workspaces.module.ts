import { Global, Module } from '@nestjs/common';
import { Authenticator } from '../common/auth/authenticator';
import { CredentialsService } from '../auth/credentials.service';
import { WorkspaceKeyCache } from '../auth/workspace-key.cache';
import { UserIdCache } from '../auth/user-id.cache';
import { AdminWorkspacesController, WorkspaceController } from './workspaces.controller';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';
import { WorkspaceBootstrap } from './workspace-bootstrap.service';
import { WorkspaceChanges } from './workspace-changes';
import { WorkspaceSettingsCache } from './workspace-settings.cache';

@Global()
@Module({
  controllers: [AdminWorkspacesController, WorkspaceController],
  providers: [
    WorkspacesRepository,
    WorkspacesService,
    WorkspaceChanges,
    WorkspaceSettingsCache,
    WorkspaceKeyCache,
    UserIdCache,
    CredentialsService,
    WorkspaceBootstrap,
    { provide: Authenticator, useExisting: CredentialsService },
  ],
  exports: [WorkspacesService, WorkspaceSettingsCache, WorkspaceKeyCache, WorkspaceChanges, CredentialsService, Authenticator],
})
export class WorkspacesModule {}
