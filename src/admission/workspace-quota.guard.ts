import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Principal, PRINCIPAL_KEY } from '../common/auth/principal';
import { LoadShedder } from './load-shedder';
import { WorkspaceQuotas } from './workspace-quotas';

/**
 * After the AuthGuard: a request of a workspace (its key or one of its users) counts against the
 * workspace's requests-per-second quota, or is refused 429 RATE_LIMITED before any work, and LoadShedder
 * learns the workspace's concurrency quota. The operator's and the public routes have no workspace.
 */
@Injectable()
export class WorkspaceQuotaGuard implements CanActivate {
  constructor(
    private readonly quotas: WorkspaceQuotas,
    private readonly shedder: LoadShedder,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<Request & { [PRINCIPAL_KEY]?: Principal }>();
    const principal = req[PRINCIPAL_KEY];
    if (!principal || principal.kind === 'admin') return true;
    const quotas = await this.quotas.admit(principal.workspaceId);
    this.shedder.learn(req, principal.workspaceId, quotas.concurrent_requests);
    return true;
  }
}
