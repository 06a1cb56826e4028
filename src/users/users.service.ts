import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { EventLogService } from '../events/event-log.service';
import { UserFields, UsersRepository } from './users.repository';
import { UserView, userView } from './user.view';

@Injectable()
export class UsersService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: UsersRepository,
    private readonly events: EventLogService,
  ) {}

  async upsert(workspaceId: string, fields: UserFields): Promise<{ user: UserView; created: boolean }> {
    return this.db.transaction(async (m) => {
      const [result] = await this.upsertMany(m, workspaceId, [fields]);
      return result!;
    });
  }

  async upsertBatch(workspaceId: string, users: UserFields[]): Promise<UserView[]> {
    const seen = new Set<string>();
    users.forEach((u, i) => {
      if (seen.has(u.external_id))
        throw AppError.validation(`users[${i}].external_id`, 'appears twice in the batch');
      seen.add(u.external_id);
    });
    // a stable order avoids deadlocks between two batches touching the same users
    const ordered = [...users].sort((a, b) => (a.external_id < b.external_id ? -1 : 1));
    const results = await this.db.transaction((m) => this.upsertMany(m, workspaceId, ordered));
    const byId = new Map(results.map((r) => [r.user.external_id, r.user]));
    return users.map((u) => byId.get(u.external_id)!);
  }

  private async upsertMany(m: EntityManager, workspaceId: string, users: UserFields[]) {
    const out: { user: UserView; created: boolean }[] = [];
    for (const u of users) {
      const row = await this.repo.upsert(m, workspaceId, u);
      const user = userView(row);
      if (row.inserted) await this.events.append(m, { workspaceId, type: 'user.created', payload: { user } });
      out.push({ user, created: row.inserted });
    }
    return out;
  }

  async get(workspaceId: string, externalId: string): Promise<UserView> {
    const row = await this.repo.findByExternalId(workspaceId, externalId);
    if (!row) throw AppError.notFound('User');
    return userView(row);
  }
}
