import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EventEmitter } from 'events';
import type Redis from 'ioredis';
import { RedisService } from '../infra/redis/redis.module';

/** What changed: the key pairs (rotation), the settings, the quotas, users (deleted), or the whole workspace (deleted). */
export type WorkspaceChangeKind = 'keys' | 'settings' | 'quotas' | 'users' | 'deleted';

export interface WorkspaceChange {
  workspaceId: string;
  kind: WorkspaceChangeKind;
  /** For `users`: the user deleted (their sockets close). */
  userId?: string;
}

const KINDS: readonly string[] = [
  'keys',
  'settings',
  'quotas',
  'users',
  'deleted',
] satisfies WorkspaceChangeKind[];

/**
 * Tells the workspace caches (keys, settings, user ids) that a workspace changed: on this instance at once, on the
 * others through Redis pub/sub when REDIS_URL is set (the same pattern as EventNotifier). Call
 * `changed()` after the change has committed. A lost message only costs the caches' TTL; after the
 * subscriber reconnects (messages may have been lost meanwhile) listeners are told to drop everything.
 */
@Injectable()
export class WorkspaceChanges implements OnModuleInit, BeforeApplicationShutdown {
  private readonly local = new EventEmitter();
  private readonly logger = new Logger('WorkspaceChanges');
  private sub?: Redis;

  constructor(private readonly redis: RedisService) {
    this.local.setMaxListeners(20);
  }

  private get channel(): string {
    return `${this.redis.prefix}workspaces:changed`;
  }

  onModuleInit(): void {
    if (!this.redis.enabled) return;
    this.sub = this.redis.duplicate('workspaces-sub');
    this.sub
      .subscribe(this.channel)
      .catch((err: unknown) => this.logger.warn(`subscribe failed: ${String(err)}`));
    this.sub.on('message', (_channel: string, message: string) => {
      const change = parse(message);
      if (change) this.local.emit('change', change);
    });
    // (re)connected: whatever was published while the subscriber was away is lost
    this.sub.on('ready', () => this.local.emit('resync'));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.local.removeAllListeners();
    await this.sub?.unsubscribe().catch(() => undefined);
  }

  /** Announces a committed change: local listeners run before this returns. */
  changed(workspaceId: string, kind: WorkspaceChangeKind, userId?: string): void {
    const change: WorkspaceChange = userId ? { workspaceId, kind, userId } : { workspaceId, kind };
    this.local.emit('change', change);
    this.redis.client?.publish(this.channel, JSON.stringify(change)).catch(() => undefined);
  }

  onChange(listener: (change: WorkspaceChange) => void): () => void {
    this.local.on('change', listener);
    return () => this.local.off('change', listener);
  }

  /** Called when changes may have been missed: drop everything cached. */
  onResync(listener: () => void): () => void {
    this.local.on('resync', listener);
    return () => this.local.off('resync', listener);
  }
}

function parse(message: string): WorkspaceChange | null {
  try {
    const v = JSON.parse(message) as Partial<WorkspaceChange>;
    if (typeof v.workspaceId !== 'string' || typeof v.kind !== 'string' || !KINDS.includes(v.kind))
      return null;
    return typeof v.userId === 'string'
      ? { workspaceId: v.workspaceId, kind: v.kind, userId: v.userId }
      : { workspaceId: v.workspaceId, kind: v.kind };
  } catch {
    return null;
  }
}
