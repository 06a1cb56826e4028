import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors';

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

const FORBIDDEN_CALLER: Record<'backend' | 'user' | 'any', string> = {
  backend: 'a user token (this route takes the workspace key)',
  user: 'a workspace key (this route takes a user token)',
  any: 'the operator token (this route takes a workspace key or a user token)',
};

/** Sets the route's policy for the global guard and documents the security scheme in OpenAPI. */
export function Auth(policy: AuthPolicy): MethodDecorator & ClassDecorator {
  const docs: (MethodDecorator & ClassDecorator)[] = [];
  if (policy === 'backend' || policy === 'any')
    docs.push(ApiBearerAuth(SECURITY.workspaceKey), ApiBasicAuth(SECURITY.workspaceBasic));
  if (policy === 'user' || policy === 'any') docs.push(ApiBearerAuth(SECURITY.userJwt));
  if (policy === 'admin') {
    docs.push(
      ApiBearerAuth(SECURITY.adminToken),
      ApiErrors({
        401: 'UNAUTHORIZED: missing or invalid operator token',
        403: 'FORBIDDEN: a workspace key or a user token (these routes take the operator token)',
        404: 'NOT_FOUND: SERVICE_ADMIN_TOKEN is not set (the admin API is off)',
      }),
    );
  } else if (policy !== 'public') {
    docs.push(
      ApiErrors({
        401: 'UNAUTHORIZED: missing, malformed, expired or wrongly signed credentials',
        403: `FORBIDDEN: ${FORBIDDEN_CALLER[policy]}`,
      }),
    );
  }
  return applyDecorators(SetMetadata(AUTH_POLICY_KEY, policy), ...docs);
}
