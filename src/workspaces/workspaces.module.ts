import { Global, Module } from '@nestjs/common';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';
import { WorkspaceBootstrap } from './workspace-bootstrap.service';
import { WorkspaceChanges } from './workspace-changes';
import { WorkspaceSettingsCache } from './workspace-settings.cache';

/** Workspaces, their settings and the news of their changes, for every role; the routes are WorkspacesApiModule's. */
@Global()
@Module({
  providers: [
    WorkspacesRepository,
    WorkspacesService,
    WorkspaceChanges,
    WorkspaceSettingsCache,
    WorkspaceBootstrap,
  ],
  exports: [WorkspacesRepository, WorkspacesService, WorkspaceSettingsCache, WorkspaceChanges],
})
export class WorkspacesModule {}
