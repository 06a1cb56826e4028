import type { Principal } from './principal';

/** Resolves an Authorization header to a principal; throws AppError('UNAUTHORIZED') on bad credentials. */
export abstract class Authenticator {
  abstract authenticate(authorization: string | undefined): Promise<Principal>;
}
