import { Global, Module } from '@nestjs/common';
import { LoadShedder } from './load-shedder';
import { AdminQuotasController } from './quotas.controller';
import { WorkspaceQuotas } from './workspace-quotas';

/** What an instance takes on: load shedding (src/app.factory.ts) and the per-workspace quotas (a guard, the gateway). */
@Global()
@Module({
  providers: [LoadShedder, WorkspaceQuotas],
  exports: [LoadShedder, WorkspaceQuotas],
})
export class AdmissionModule {}

/** The operator's routes for the quotas: in the roles that serve the API. */
@Module({ controllers: [AdminQuotasController] })
export class AdmissionApiModule {}
