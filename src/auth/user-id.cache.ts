import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { prepared } from '../infra/database/prepared';
import { TtlLru } from '../workspaces/ttl-lru';
import { WorkspaceChanges } from '../workspaces/workspace-changes';

export const USER_ID_CACHE_MAX = 100_000;
export const USER_ID_CACHE_TTL_MS = 30_000;

/**
 * A user token's `sub` (external id) → the user's id, without a query per request. A deleted user's
 * tokens must stop working: deleting a user (or the workspace) drops the workspace's entries at once
 * here and, through Redis pub/sub (WorkspaceChanges), on the other instances; the 30 s TTL is the
 * safety net if a message is lost. A lookup in flight when a deletion lands is not stored.
 */
@Injectable()
export class UserIdCache {
  private readonly cache = new TtlLru<string, string>(USER_ID_CACHE_MAX, USER_ID_CACHE_TTL_MS);
  private generation = 0;

  constructor(
    private readonly db: DataSource,
    changes: WorkspaceChanges,
  ) {
    changes.onChange((c) => {
      if (c.kind === 'users' || c.kind === 'deleted') this.forgetWorkspace(c.workspaceId);
    });
    changes.onResync(() => {
      this.generation++;
      this.cache.clear();
    });
  }

  /** The user's id, or null when there is no such user in the workspace (not cached). */
  async get(workspaceId: string, externalId: string): Promise<string | null> {
    const key = `${workspaceId}\n${externalId}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const generation = this.generation;
    const found = await prepared<{ id: string }>(
      this.db.manager,
      `SELECT id FROM users WHERE workspace_id = $1 AND external_id = $2`,
      [workspaceId, externalId],
    );
    const id = found[0]?.id ?? null;
    if (id && generation === this.generation) this.cache.set(key, id);
    return id;
  }

  private forgetWorkspace(workspaceId: string): void {
    this.generation++;
    const prefix = `${workspaceId}\n`;
    this.cache.deleteWhere((_, key) => key.startsWith(prefix));
  }
}
