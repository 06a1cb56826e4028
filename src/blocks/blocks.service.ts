import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { UserPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import { isoNotNull } from '../common/time';
import { UsersRepository } from '../users/users.repository';
import { BlocksRepository } from './blocks.repository';

export interface BlockView {
  external_id: string;
  created_at: string;
}

/** CONTRACT §5: a user's blocks, workspace-wide. Reads that honour them live with those reads. */
@Injectable()
export class BlocksService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: BlocksRepository,
    private readonly users: UsersRepository,
  ) {}

  async block(p: UserPrincipal, externalId: string): Promise<{ block: BlockView; created: boolean }> {
    if (externalId === p.externalId) throw AppError.validation('external_id', 'you cannot block yourself');
    const target = await this.users.findByExternalId(p.workspaceId, externalId);
    if (!target) throw AppError.notFound('User');
    const row = await this.repo.insert(this.db.manager, p.workspaceId, p.userId, target.id);
    return {
      block: { external_id: target.external_id, created_at: isoNotNull(row.created_at) },
      created: row.created,
    };
  }

  /** Idempotent: unblocking someone who is not blocked is fine; an unknown user is 404. */
  async unblock(p: UserPrincipal, externalId: string): Promise<void> {
    const target = await this.users.findByExternalId(p.workspaceId, externalId);
    if (!target) throw AppError.notFound('User');
    await this.repo.delete(this.db.manager, p.workspaceId, p.userId, target.id);
  }

  async list(p: UserPrincipal, limit = 50, before?: string) {
    let cursor: { createdKey: string; blockedId: string } | undefined;
    if (before) {
      const { key: createdKey, id: blockedId } = decodeTimeIdCursor(before);
      cursor = { createdKey, blockedId };
    }
    const rows = await this.repo.list(this.db.manager, p.workspaceId, p.userId, limit, cursor);
    const page = pageOf(rows, limit, (r) => [r.created_key, r.blocked_id]);
    return {
      blocks: page.items.map((r): BlockView => ({
        external_id: r.external_id,
        created_at: isoNotNull(r.created_at),
      })),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }
}
