import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { TtlLru } from '../common/ttl-lru';
import { WorkspaceChanges } from './workspace-changes';
import { effectiveSettings, WorkspaceSettings } from './workspace-settings';
import { WorkspacesRepository } from './workspaces.repository';

export const SETTINGS_CACHE_MAX = 10_000;
export const SETTINGS_CACHE_TTL_MS = 30_000;

/**
 * A workspace's effective settings (stored overrides merged over the defaults) without a query per
 * request. Bounded (LRU), 30 s TTL as a safety net; PATCH /v1/workspace/settings and workspace deletion
 * drop the entry at once here and, through Redis pub/sub (WorkspaceChanges), on the other instances.
 *
 * The object handed out is shared and deeply frozen: read it, never change it.
 */
@Injectable()
export class WorkspaceSettingsCache {
  private readonly cache = new TtlLru<string, WorkspaceSettings>(SETTINGS_CACHE_MAX, SETTINGS_CACHE_TTL_MS);
  private readonly inflight = new Map<string, Promise<WorkspaceSettings>>();
  private generation = 0;

  constructor(
    private readonly repo: WorkspacesRepository,
    changes: WorkspaceChanges,
  ) {
    changes.onChange((c) => {
      if (c.kind === 'settings' || c.kind === 'deleted') this.forget(c.workspaceId);
    });
    changes.onResync(() => this.clear());
  }

  /** The safety-net TTL (tests shorten it). */
  get ttlMs(): number {
    return this.cache.ttlMs;
  }

  set ttlMs(ms: number) {
    this.cache.ttlMs = ms;
  }

  /**
   * The workspace's effective settings; AppError NOT_FOUND when there is no such workspace.
   *
   * Inside a transaction pass its EntityManager `m`: on a miss the settings are then read through it
   * (the embedded database has a single connection, a read beside the transaction would wait for it
   * forever) and not stored (the transaction's snapshot may predate the latest change). A hit costs no
   * query either way.
   */
  async get(workspaceId: string, m?: EntityManager): Promise<WorkspaceSettings> {
    const hit = this.cache.get(workspaceId);
    if (hit) return hit;
    if (m?.queryRunner?.isTransactionActive) return build(await this.repo.findSettings(workspaceId, m));

    const pending = this.inflight.get(workspaceId);
    if (pending) return pending;
    const gen = this.generation;
    const started = Date.now(); // the TTL counts from before the read
    const p = this.repo
      .findSettings(workspaceId)
      .then((stored) => {
        const settings = build(stored);
        if (gen === this.generation) this.cache.set(workspaceId, settings, started);
        return settings;
      })
      .finally(() => {
        if (this.inflight.get(workspaceId) === p) this.inflight.delete(workspaceId);
      });
    this.inflight.set(workspaceId, p);
    return p;
  }

  /** Drops the workspace's entry (its settings changed, or it was deleted). */
  forget(workspaceId: string): void {
    this.generation++;
    this.inflight.clear();
    this.cache.delete(workspaceId);
  }

  clear(): void {
    this.generation++;
    this.inflight.clear();
    this.cache.clear();
  }
}

function build(stored: Record<string, unknown> | undefined): WorkspaceSettings {
  if (stored === undefined) throw AppError.notFound('Workspace');
  return deepFreeze(effectiveSettings(stored));
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}
