import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { UsersRepository } from '../users/users.repository';

export interface ActingUser {
  id: string;
  external_id: string;
}

/**
 * Who acts: the JWT's user, or the user a backend key names in `user_external_id` (CONTRACT §3). A
 * user token may repeat its own external id but never name someone else.
 */
@Injectable()
export class ActingUsers {
  constructor(private readonly users: UsersRepository) {}

  async resolve(
    p: WorkspacePrincipal,
    userExternalId: string | undefined,
    m?: EntityManager,
  ): Promise<ActingUser> {
    if (p.kind === 'user') return this.accept(p, userExternalId, null);
    if (!userExternalId) return this.accept(p, userExternalId, null);
    const user = await this.users.findByExternalId(p.workspaceId, userExternalId, m);
    return this.accept(p, userExternalId, user);
  }

  /**
   * The same rules when the caller has already looked the backend's user up (`found`, or null when
   * there is no such user): a user token is itself; a backend key must name a known user.
   */
  accept(p: WorkspacePrincipal, userExternalId: string | undefined, found: ActingUser | null): ActingUser {
    if (p.kind === 'user') {
      if (userExternalId !== undefined && userExternalId !== p.externalId) {
        throw AppError.validation('user_external_id', 'is only for backend keys');
      }
      return { id: p.userId, external_id: p.externalId };
    }
    if (!userExternalId) throw AppError.validation('user_external_id', 'is required with a workspace key');
    if (!found) throw AppError.validation('user_external_id', `unknown user ${userExternalId}`);
    return { id: found.id, external_id: found.external_id };
  }
}
