import { createParamDecorator, ExecutionContext } from '@nestjs/common';

export interface BackendPrincipal {
  kind: 'backend';
  workspaceId: string;
  apiKey: string;
}

export interface UserPrincipal {
  kind: 'user';
  workspaceId: string;
  userId: string;
  externalId: string;
}

export interface AdminPrincipal {
  kind: 'admin';
}

export type Principal = BackendPrincipal | UserPrincipal | AdminPrincipal;
/** What a workspace-scoped route receives: a backend key or a user JWT. */
export type WorkspacePrincipal = BackendPrincipal | UserPrincipal;

export const PRINCIPAL_KEY = 'principal';

/** The authenticated caller, as the global guard resolved it. */
export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal | undefined => {
    const req = ctx.switchToHttp().getRequest<Record<string, unknown>>();
    return req[PRINCIPAL_KEY] as Principal | undefined;
  },
);
