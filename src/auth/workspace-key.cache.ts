import { Injectable } from '@nestjs/common';
import { createHash, KeyObject, timingSafeEqual } from 'crypto';
import { SecretBox } from '../common/crypto';
import { TtlLru } from '../common/ttl-lru';
import { WorkspaceChanges } from '../workspaces/workspace-changes';
import { KeyRow, WorkspacesRepository } from '../workspaces/workspaces.repository';
import { hmacKey } from './hs256';

/** A workspace key that authenticates: current, or rotated away but still within its grace period. */
export interface ActiveKey {
  readonly workspaceId: string;
  readonly apiKey: string;
  /** SHA-256 of the opened secret, in memory only (the database keeps the secret sealed, no digest). */
  readonly secretSha256: Buffer;
  /** The secret as an HMAC key (decrypted once per fetch, not per request). */
  readonly hmac: KeyObject;
  /** Date.now() from which the key no longer authenticates (end of a rotation's grace); null: current. */
  readonly expiresAt: number | null;
}

interface Entry {
  readonly key: ActiveKey;
  /** Safety net: the entry is not trusted after this, whichever map holds it. */
  readonly staleAt: number;
  /** The cache generation when its fetch began. */
  readonly gen: number;
  /** Set when the workspace changed: every map that still holds it must stop using it. */
  dropped: boolean;
}

export const KEY_CACHE_MAX = 10_000;
export const KEY_CACHE_TTL_MS = 30_000;

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * Workspace keys without a database round trip or a decryption per request:
 *
 * - api_key → the key (workspace, secret hash, secret as an HMAC KeyObject, end of grace);
 * - hash of the full `pk_…:sk_…` pair → the key it matched, so a key-pair request costs a hash and a
 *   map lookup;
 * - workspace → its current key (signing user tokens and webhooks).
 *
 * Bounded (LRU) with a 30 s TTL as a safety net. A rotation or a deletion (WorkspaceChanges) drops the
 * workspace's entries at once on the instance that made it and, through Redis pub/sub, on the others.
 * A fetch that began before a change is never stored (generation check), so an invalidation cannot be
 * undone by a read in flight. The end of a grace period is kept as "the database's now + what was
 * left", so a rotated-away key stops on time whatever this machine's clock says.
 */
@Injectable()
export class WorkspaceKeyCache {
  private readonly keys = new TtlLru<string, Entry>(KEY_CACHE_MAX, KEY_CACHE_TTL_MS);
  private readonly pairs = new TtlLru<string, Entry>(KEY_CACHE_MAX, KEY_CACHE_TTL_MS);
  private readonly current = new TtlLru<string, Entry>(KEY_CACHE_MAX, KEY_CACHE_TTL_MS);
  private readonly inflight = new Map<string, Promise<Entry | null>>();
  private generation = 0;
  private ttl = KEY_CACHE_TTL_MS;

  constructor(
    private readonly repo: WorkspacesRepository,
    private readonly box: SecretBox,
    changes: WorkspaceChanges,
  ) {
    changes.onChange((c) => {
      if (c.kind === 'keys' || c.kind === 'deleted') this.forget(c.workspaceId);
    });
    changes.onResync(() => this.clear());
  }

  /** The safety-net TTL (tests shorten it). */
  get ttlMs(): number {
    return this.ttl;
  }

  set ttlMs(ms: number) {
    this.ttl = ms;
    for (const m of [this.keys, this.pairs, this.current]) m.ttlMs = ms;
  }

  /** The key named `apiKey` if it authenticates now (current or in grace), else null. */
  async active(apiKey: string): Promise<ActiveKey | null> {
    return (await this.activeEntry(apiKey))?.key ?? null;
  }

  /**
   * The key if `apiSecret` is its secret and it authenticates now, else null. The secret is compared as
   * a SHA-256 in constant time, also when the key is unknown, so timing does not tell keys apart.
   */
  async verifyPair(apiKey: string, apiSecret: string): Promise<ActiveKey | null> {
    const pairHash = createHash('sha256').update(`${apiKey}:${apiSecret}`).digest('base64');
    const now = Date.now();
    const hit = this.pairs.get(pairHash, now);
    if (hit && usable(hit, now)) return hit.key;

    const entry = await this.activeEntry(apiKey);
    const ok = timingSafeEqual(sha256(apiSecret), entry?.key.secretSha256 ?? sha256(`absent:${apiKey}`));
    if (!entry || !ok) return null;
    this.store(this.pairs, pairHash, entry);
    return entry.key;
  }

  /** The workspace's current key (no grace period), or null when it has none. */
  async currentKey(workspaceId: string): Promise<ActiveKey | null> {
    const now = Date.now();
    const hit = this.current.get(workspaceId, now);
    if (hit && usable(hit, now)) return hit.key;
    const entry = await this.load(
      `c:${workspaceId}`,
      () => this.repo.findCurrentKey(workspaceId),
      (e) => {
        this.store(this.current, workspaceId, e);
        this.store(this.keys, e.key.apiKey, e);
      },
    );
    return entry && usable(entry, Date.now()) ? entry.key : null;
  }

  /** Drops everything cached for the workspace (its keys were rotated, or it was deleted). */
  forget(workspaceId: string): void {
    this.generation++;
    this.inflight.clear();
    this.drop((e) => e.key.workspaceId === workspaceId);
  }

  /** Drops everything (changes may have been missed). */
  clear(): void {
    this.generation++;
    this.inflight.clear();
    this.drop(() => true);
  }

  /** Marks matching entries dropped (another map may still hold them) and removes them from every map. */
  private drop(match: (e: Entry) => boolean): void {
    const hit = (e: Entry) => {
      if (!match(e)) return false;
      e.dropped = true;
      return true;
    };
    for (const m of [this.keys, this.pairs, this.current]) m.deleteWhere(hit);
  }

  private async activeEntry(apiKey: string): Promise<Entry | null> {
    const now = Date.now();
    const hit = this.keys.get(apiKey, now);
    if (hit && usable(hit, now)) return hit;
    if (hit) {
      // past its grace period (or dropped): the database would not return it either
      this.keys.delete(apiKey);
      if (!hit.dropped && hit.key.expiresAt !== null && now >= hit.key.expiresAt) return null;
    }
    const entry = await this.load(
      `k:${apiKey}`,
      () => this.repo.findActiveKey(apiKey),
      (e) => this.store(this.keys, apiKey, e),
    );
    return entry && usable(entry, Date.now()) ? entry : null;
  }

  /** One fetch per key at a time; the result is stored only if nothing changed since the fetch began. */
  private load(
    flight: string,
    fetch: () => Promise<KeyRow | null>,
    store: (e: Entry) => void,
  ): Promise<Entry | null> {
    const pending = this.inflight.get(flight);
    if (pending) return pending;
    const gen = this.generation;
    const started = Date.now();
    const p = fetch()
      .then((row) => {
        if (!row) return null;
        const entry: Entry = {
          key: {
            workspaceId: row.workspace_id,
            apiKey: row.api_key,
            ...opened(this.box.open(row.secret_sealed)),
            // measured from before the query was sent: never later than the database's expires_at
            expiresAt: row.expires_in_ms === null ? null : started + Number(row.expires_in_ms),
          },
          staleAt: started + this.ttl,
          gen,
          dropped: false,
        };
        store(entry);
        return entry;
      })
      .finally(() => {
        if (this.inflight.get(flight) === p) this.inflight.delete(flight);
      });
    this.inflight.set(flight, p);
    return p;
  }

  private store(map: TtlLru<string, Entry>, k: string, e: Entry): void {
    if (e.gen === this.generation && !e.dropped) map.set(k, e);
  }
}

function opened(secret: string): Pick<ActiveKey, 'secretSha256' | 'hmac'> {
  return { secretSha256: sha256(secret), hmac: hmacKey(secret) };
}

function usable(e: Entry, now: number): boolean {
  return !e.dropped && now < e.staleAt && (e.key.expiresAt === null || now < e.key.expiresAt);
}
