import { Module } from '@nestjs/common';
import { AdminWorkspacesController, WorkspaceController } from './workspaces.controller';

/** The workspace routes (the admin API and a workspace's own settings): in the roles that serve the API. */
@Module({ controllers: [AdminWorkspacesController, WorkspaceController] })
export class WorkspacesApiModule {}
