import { Global, Module } from '@nestjs/common';
import { Authenticator } from '../common/auth/authenticator';
import { CredentialsService } from '../auth/credentials.service';
import { AdminWorkspacesController, WorkspaceController } from './workspaces.controller';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';
import { WorkspaceBootstrap } from './workspace-bootstrap.service';

@Global()
@Module({
  controllers: [AdminWorkspacesController, WorkspaceController],
  providers: [
    WorkspacesRepository,
    WorkspacesService,
    CredentialsService,
    WorkspaceBootstrap,
    { provide: Authenticator, useExisting: CredentialsService },
  ],
  exports: [WorkspacesService, CredentialsService, Authenticator],
})
export class WorkspacesModule {}
