import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { randomToken, SecretBox } from '../common/crypto';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { decodeIdCursor, pageOf } from '../common/pagination';
import { isoNotNull } from '../common/time';
import { PatchWorkspaceSettingsDto } from './dto/workspace-settings.dto';
import { WorkspaceChanges } from './workspace-changes';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import {
  deepMerge,
  effectiveSettings,
  PRE_SEND_HOOK_DEFAULTS,
  PreSendHookSettings,
  WorkspaceSettings,
} from './workspace-settings';
import { WorkspaceSettingsCache } from './workspace-settings.cache';
import { WorkspaceRow, WorkspacesRepository } from './workspaces.repository';

export interface WorkspaceView {
  id: string;
  name: string;
  api_key: string | null;
  settings: WorkspaceSettings;
  created_at: string;
}

export interface CreatedWorkspace {
  id: string;
  name: string;
  api_key: string;
  api_secret: string;
  created_at: string;
}

/** The name of the workspace the embedded default creates on a first start (and the demo app signs into). */
export const DEVELOPMENT_WORKSPACE_NAME = 'Development';

export function newKeyPair(): { apiKey: string; apiSecret: string } {
  return { apiKey: randomToken('pk_', 12), apiSecret: randomToken('sk_', 32) };
}

@Injectable()
export class WorkspacesService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: WorkspacesRepository,
    private readonly box: SecretBox,
    // absent in the CLI, which runs without the application: running instances then notice its
    // changes (a deleted workspace) within the caches' TTL
    @Optional() private readonly changes?: WorkspaceChanges,
    @Optional() private readonly settingsCache?: WorkspaceSettingsCache,
    // the address policy of outbound calls (absent in the CLI): a hook URL is checked as a webhook's
    @Optional() private readonly http?: SafeHttpClient,
  ) {}

  /** Creates a workspace and its first key pair; the secret is returned here only. */
  async create(name: string, pair = newKeyPair()): Promise<CreatedWorkspace> {
    const id = newId();
    await this.db.transaction(async (m) => {
      await this.repo.insert(m, id, name);
      const inserted = await this.repo.insertKey(m, {
        id: newId(),
        workspaceId: id,
        apiKey: pair.apiKey,
        secretSealed: this.box.seal(pair.apiSecret),
      });
      if (!inserted) throw AppError.validation('api_key', 'is already in use');
    });
    const row = await this.repo.find(id);
    return {
      id,
      name,
      api_key: pair.apiKey,
      api_secret: pair.apiSecret,
      created_at: isoNotNull(row!.created_at),
    };
  }

  /** Bootstrap: a workspace with exactly this pair, created once (safe when instances race). */
  async ensureWithKeyPair(name: string, apiKey: string, apiSecret: string): Promise<'created' | 'exists'> {
    if (await this.repo.findActiveKey(apiKey)) return 'exists';
    try {
      await this.create(name, { apiKey, apiSecret });
      return 'created';
    } catch (e) {
      if (e instanceof AppError && e.code === 'VALIDATION_ERROR') return 'exists';
      throw e;
    }
  }

  async count(): Promise<number> {
    return this.repo.count();
  }

  /** The workspace an active api key belongs to. */
  async idOfKey(apiKey: string): Promise<string | null> {
    return (await this.repo.findActiveKey(apiKey))?.workspace_id ?? null;
  }

  /** The oldest workspace of that name. */
  async oldestNamed(name: string): Promise<string | null> {
    return this.repo.oldestNamed(name);
  }

  async get(id: string): Promise<WorkspaceView> {
    const row = await this.repo.find(id);
    if (!row) throw AppError.notFound('Workspace');
    return this.view(row);
  }

  async list(limit: number, before?: string) {
    const rows = await this.repo.list(limit, before ? decodeIdCursor(before) : undefined);
    const page = pageOf(rows, limit, (r) => [r.id]);
    return {
      workspaces: page.items.map((r) => this.view(r)),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  async delete(id: string): Promise<void> {
    const deleted = await this.repo.delete(id);
    // also when nothing was deleted: a cache elsewhere may still hold a workspace deleted before
    this.changes?.changed(id, 'deleted');
    if (!deleted) throw AppError.notFound('Workspace');
  }

  /**
   * The effective settings, from the cache (no query on a hit). The object is shared and frozen. Inside a
   * transaction use WorkspaceSettingsCache.get(id, m) instead.
   */
  async settings(id: string): Promise<WorkspaceSettings> {
    if (this.settingsCache) return this.settingsCache.get(id);
    return (await this.get(id)).settings;
  }

  /**
   * Deep-merges the patch into the stored settings. A pre-send hook's URL is checked first (outside the
   * transaction: it may resolve the host) as a webhook's is; the merged hook gets its defaults, and
   * needs a URL.
   */
  async patchSettings(id: string, patch: PatchWorkspaceSettingsDto): Promise<WorkspaceSettings> {
    const hookUrl = patch.pre_send_hook?.url;
    if (hookUrl !== undefined) {
      const problem = this.http
        ? await this.http.targetProblem(hookUrl)
        : hookUrl.startsWith('http:') || hookUrl.startsWith('https:')
          ? null
          : 'must be an absolute http or https URL';
      if (problem) throw AppError.validation('pre_send_hook.url', problem);
    }
    const settings = await this.db.transaction(async (m) => {
      const row = await this.repo.lockForUpdate(m, id);
      if (!row) throw AppError.notFound('Workspace');
      const merged = deepMerge(row.settings ?? {}, JSON.parse(JSON.stringify(patch)) as unknown);
      const hook = (merged as { pre_send_hook?: Partial<PreSendHookSettings> | null }).pre_send_hook;
      if (hook) {
        if (!hook.url) throw AppError.validation('pre_send_hook.url', 'is required to set a pre-send hook');
        const complete: PreSendHookSettings = { ...PRE_SEND_HOOK_DEFAULTS, ...hook, url: hook.url.trim() };
        (merged as { pre_send_hook: PreSendHookSettings }).pre_send_hook = complete;
      }
      await this.repo.saveSettings(m, id, merged);
      return effectiveSettings(merged);
    });
    this.changes?.changed(id, 'settings'); // committed: drop the cached settings here and elsewhere
    return settings;
  }

  /** A new pair; the old one (and JWTs signed with its secret) keep working for `graceSeconds`. */
  async rotateSecret(id: string, graceSeconds: number): Promise<{ api_key: string; api_secret: string }> {
    const pair = newKeyPair();
    await this.db.transaction(async (m) => {
      if (!(await this.repo.lockForUpdate(m, id))) throw AppError.notFound('Workspace');
      await this.repo.expireCurrentKeys(m, id, graceSeconds);
      await this.repo.insertKey(m, {
        id: newId(),
        workspaceId: id,
        apiKey: pair.apiKey,
        secretSealed: this.box.seal(pair.apiSecret),
      });
    });
    this.changes?.changed(id, 'keys'); // committed: the old key's new end of grace applies everywhere
    return { api_key: pair.apiKey, api_secret: pair.apiSecret };
  }

  private view(row: WorkspaceRow): WorkspaceView {
    return {
      id: row.id,
      name: row.name,
      api_key: row.api_key,
      settings: effectiveSettings(row.settings),
      created_at: isoNotNull(row.created_at),
    };
  }
}
