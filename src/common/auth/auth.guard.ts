import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { AppError } from '../errors/app-error';
import { AUTH_POLICY_KEY, AuthPolicy } from './auth.decorator';
import { Authenticator } from './authenticator';
import { PRINCIPAL_KEY } from './principal';

/**
 * Deny by default: a route without @Auth(...) is refused. Bad credentials are 401; good
 * credentials of the wrong kind are 403. It never answers `false`.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Each route's policy by controller and handler, read from the metadata once (it never changes at run time). */
  private readonly policies = new WeakMap<object, WeakMap<object, AuthPolicy | null>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const policy = this.policyOf(ctx);
    if (!policy) throw new AppError('FORBIDDEN', 'This route is not open to any caller');
    if (policy === 'public') return true;
    if (policy === 'admin' && !this.config.SERVICE_ADMIN_TOKEN)
      throw new AppError('NOT_FOUND', 'No such route');

    const req = ctx.switchToHttp().getRequest<Request & Record<string, unknown>>();
    const principal = await this.authenticator.authenticate(req.headers.authorization);
    req[PRINCIPAL_KEY] = principal;

    const allowed =
      policy === 'any'
        ? principal.kind === 'backend' || principal.kind === 'user'
        : principal.kind === policy;
    if (!allowed) {
      const what =
        policy === 'any'
          ? 'a workspace key or a user token'
          : policy === 'backend'
            ? 'a workspace key'
            : policy === 'user'
              ? 'a user token'
              : 'the operator token';
      throw new AppError('FORBIDDEN', `This route needs ${what}`);
    }
    return true;
  }

  private policyOf(ctx: ExecutionContext): AuthPolicy | null {
    const controller = ctx.getClass();
    const handler = ctx.getHandler();
    let byHandler = this.policies.get(controller);
    if (!byHandler) this.policies.set(controller, (byHandler = new WeakMap()));
    let policy = byHandler.get(handler);
    if (policy === undefined) {
      policy =
        this.reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY_KEY, [handler, controller]) ??
        null;
      byHandler.set(handler, policy);
    }
    return policy;
  }
}
