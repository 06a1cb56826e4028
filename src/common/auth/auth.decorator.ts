import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';

/**
 * Who may call a route:
 * - backend: a workspace key pair
 * - user: a user JWT
 * - any: either (the service applies membership rules to users)
 * - admin: the operator token (SERVICE_ADMIN_TOKEN)
 * - public: nobody needs to authenticate (health, docs, signed upload URLs)
 */
export type AuthPolicy = 'backend' | 'user' | 'any' | 'admin' | 'public';

export const AUTH_POLICY_KEY = 'auth:policy';

export const SECURITY = {
  workspaceKey: 'workspaceKey',
  workspaceBasic: 'workspaceBasic',
  userJwt: 'userJwt',
  adminToken: 'adminToken',
} as const;

/** Sets the route's policy for the global guard and documents the security scheme in OpenAPI. */
export function Auth(policy: AuthPolicy): MethodDecorator & ClassDecorator {
  const docs: (MethodDecorator & ClassDecorator)[] = [];
  if (policy === 'backend' || policy === 'any') docs.push(ApiBearerAuth(SECURITY.workspaceKey), ApiBasicAuth(SECURITY.workspaceBasic));
  if (policy === 'user' || policy === 'any') docs.push(ApiBearerAuth(SECURITY.userJwt));
  if (policy === 'admin') docs.push(ApiBearerAuth(SECURITY.adminToken));
  if (policy !== 'public') {
    docs.push(
      ApiUnauthorizedResponse({ description: 'UNAUTHORIZED: missing or invalid credentials' }),
      ApiForbiddenResponse({ description: 'FORBIDDEN: these credentials may not call this route' }),
    );
  }
  return applyDecorators(SetMetadata(AUTH_POLICY_KEY, policy), ...docs);
}
