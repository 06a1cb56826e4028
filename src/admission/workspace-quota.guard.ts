import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Principal, PRINCIPAL_KEY } from '../common/auth/principal';
import { ADMIN, LoadShedder } from './load-shedder';
import { Quotas, WorkspaceQuotas } from './workspace-quotas';

/**
 * After the AuthGuard: a request of a workspace (its key or one of its users) counts against the
 * workspace's requests-per-second quota, or is refused 429 RATE_LIMITED before any work, and LoadShedder
 * learns that these credentials are the workspace's (its next requests take the workspace's turns) and
 * its concurrency quota; the operator's token takes the operator's. The public routes have neither.
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
    if (!principal) return true;
    if (principal.kind === 'admin') {
      this.shedder.vouch(req, ADMIN);
      return true;
    }
    let quotas: Quotas | undefined;
    try {
      quotas = await this.quotas.admit(principal.workspaceId);
      return true;
    } finally {
      // over its requests-per-second quota or not, these credentials are the workspace's
      this.shedder.vouch(req, principal.workspaceId, quotas?.concurrent_requests);
    }
  }
}
