import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Batcher } from '../common/batcher';
import { prepared } from '../infra/database/prepared';
import { TtlLru } from '../common/ttl-lru';
import { WorkspaceChanges } from '../workspaces/workspace-changes';

export const USER_ID_CACHE_MAX = 100_000;
export const USER_ID_CACHE_TTL_MS = 30_000;

/** One string for a user's workspace and external id (a uuid holds no newline), for maps and batches. */
export const userKey = (workspaceId: string, externalId: string) => `${workspaceId}\n${externalId}`;
/** The workspace ids and external ids of keys made by `userKey`, as two arrays (for `unnest`). */
export function fromUserKeys(keys: string[]): [string[], string[]] {
  const at = keys.map((k) => k.indexOf('\n'));
  return [keys.map((k, i) => k.slice(0, at[i])), keys.map((k, i) => k.slice(at[i]! + 1))];
}

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
    const key = userKey(workspaceId, externalId);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const generation = this.generation;
    const id = await this.lookups.load(key);
    if (id && generation === this.generation) this.cache.set(key, id);
    return id;
  }

  /** The misses of a connection storm (or of a burst of requests) in one query, not one each. */
  private readonly lookups = new Batcher<string, string | null>(async (keys) => {
    const rows = await prepared<{ workspace_id: string; external_id: string; id: string }>(
      this.db.manager,
      `SELECT k.workspace_id, k.external_id, u.id
         FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, external_id)
         JOIN users u ON u.workspace_id = k.workspace_id AND u.external_id = k.external_id`,
      fromUserKeys(keys),
    );
    const found = new Map<string, string | null>(keys.map((k) => [k, null]));
    for (const r of rows) found.set(userKey(r.workspace_id, r.external_id), r.id);
    return found;
  });

  private forgetWorkspace(workspaceId: string): void {
    this.generation++;
    const prefix = `${workspaceId}\n`;
    this.cache.deleteWhere((_, key) => key.startsWith(prefix));
  }
}
