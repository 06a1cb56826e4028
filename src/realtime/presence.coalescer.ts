import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { rows } from '../infra/database/sql';
import { RedisService } from '../infra/redis/redis.module';
import { largeChannelSql } from '../workspaces/workspace-settings';
import { PresenceStore } from './presence.store';
import {
  AppServer,
  AppSocket,
  channelRoom,
  presenceBatchRoom,
  PresenceNews,
  presenceRoom,
  presenceSubRoom,
  SocketData,
  userRoom,
} from './realtime-events';
import type { PresenceBatch, PresenceChange, PresenceMode } from '../contract/realtime';

/** Presence changes are gathered for this long and then announced together. */
export const PRESENCE_TICK_MS = 200;
/** A user whose last socket closed is announced offline only if no socket came back meanwhile. */
export const OFFLINE_GRACE_MS = 1_000;
/**
 * `presence.batch` goes out at most this often per instance: the first change after a quiet spell on
 * the next tick, later ones gathered (each user's last state per channel) until this much time has
 * passed since the previous batch, so a connection storm costs each batch socket about one frame per
 * second rather than one per tick.
 */
export const BATCH_INTERVAL_MS = 1_000;

const CHANNEL_PREFIX = channelRoom('');

interface Pending {
  who: SocketData;
  /** when the user's last socket here closed (offline candidates only) */
  since: number;
  /** the channel rooms of that last socket, captured while it was still in them */
  rooms: string[];
}

/**
 * Presence announcements, coalesced per instance. Sockets are counted at once (the presence store,
 * so GET /v1/channels/:id/presence is right immediately on this instance); what partners are told is
 * decided once per tick, per user, from the user's final state: a connect and a close in the same
 * tick say nothing, a close followed by a reconnect within OFFLINE_GRACE_MS says nothing, and
 * whatever happened, the last thing partners hear is the user's state at the end.
 *
 * Per tick: one Redis pipeline (the store's counts), one UPDATE for the `last_seen_at` of users who
 * went offline, one Redis round trip to ask whether those users are online on another instance, and
 * one message with the tick's announcements to the other instances (serverSideEmit). Every instance
 * delivers them to its own sockets (`deliver`): per change one local emit to the user's channel rooms
 * (the room set comes from its sockets' rooms, no query), skipped where only `batch`/`none` sockets
 * are; for `batch` sockets the changes are gathered per channel and sent at most once per
 * BATCH_INTERVAL_MS. No per-member work anywhere: O(changes) emits; what the adapter then writes is
 * one frame per (receiver, change) for `each` sockets, one per (receiver, channel, batch) for `batch`.
 */
@Injectable()
export class PresenceCoalescer implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Presence');
  private server?: AppServer;
  /** counted sockets per user on this instance (a few each: an array is lighter than a set) */
  private readonly sockets = new Map<string, AppSocket[]>();
  /** users whose socket count changed since the last tick */
  private readonly pending = new Map<string, Pending>();
  /** users this instance last announced online (and has not announced offline since) */
  private readonly announced = new Set<string>();
  private timer?: NodeJS.Timeout;
  private timerDue = 0;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  /** batch entries not sent yet: channel room → external_id → that user's last change */
  private batched = new Map<string, Map<string, PresenceChange>>();
  /** Channel rooms last seen large (kept current by each tick's query; at most the rooms with sockets here). */
  private readonly largeRooms = new Set<string>();
  private lastBatchAt = 0;

  constructor(
    private readonly store: PresenceStore,
    private readonly db: DataSource,
    private readonly redis: RedisService,
  ) {}

  attach(server: AppServer): void {
    this.server = server;
    // another instance's announcements: deliver them here, batches on this instance's schedule
    server.on('presence.news', (news) => {
      this.deliver(news);
      if (this.batched.size) this.schedule(Math.max(0, this.lastBatchAt + BATCH_INTERVAL_MS - Date.now()));
    });
  }

  /** Shutting down: no more announcements (sockets close with the server, Redis is about to). */
  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.pending.clear();
    await this.running;
  }

  /** The channel rooms the user's sockets here are in; null when none is counted yet. */
  private roomsOf(userId: string): string[] | null {
    const mine = this.sockets.get(userId);
    if (!mine) return null;
    const rooms = new Set<string>();
    for (const s of mine) for (const r of s.rooms) if (r.startsWith(CHANNEL_PREFIX)) rooms.add(r);
    return [...rooms];
  }

  /** A socket whose channel rooms are joined: counted now, announced on the next tick. */
  joined(socket: AppSocket): void {
    if (this.closed) return;
    const { userId } = socket.data;
    const mine = this.sockets.get(userId);
    if (mine?.includes(socket)) return;
    if (mine) mine.push(socket);
    else this.sockets.set(userId, [socket]);
    this.store.add(userId);
    this.touch(socket.data, 0, []);
  }

  /** A socket is closing (call it from `disconnecting`, while its rooms are still there). */
  leaving(socket: AppSocket): void {
    if (this.closed) return;
    const { userId } = socket.data;
    const mine = this.sockets.get(userId) ?? [];
    const at = mine.indexOf(socket);
    if (at < 0) return; // never counted (closed before its rooms were joined)
    mine.splice(at, 1);
    if (mine.length) {
      this.store.remove(userId);
      return; // other sockets here: nothing changes for partners
    }
    this.sockets.delete(userId);
    const rooms = [...socket.rooms].filter((r) => r.startsWith(CHANNEL_PREFIX));
    this.store.remove(userId);
    this.touch(socket.data, Date.now(), rooms);
  }

  private touch(who: SocketData, since: number, rooms: string[]): void {
    this.pending.set(who.userId, { who, since, rooms });
    this.schedule(PRESENCE_TICK_MS);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running
        .then(() => this.tick())
        .catch((e: unknown) => this.logger.warn(`presence tick failed: ${String(e)}`));
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.closed || !this.server) return;
    const now = Date.now();
    const up: Pending[] = [];
    const down: Pending[] = [];
    let next = Infinity;
    for (const [userId, p] of this.pending) {
      if (this.sockets.has(userId)) {
        this.pending.delete(userId);
        if (!this.announced.has(userId)) up.push(p);
      } else if (now - p.since >= OFFLINE_GRACE_MS) {
        this.pending.delete(userId);
        down.push(p);
      } else {
        next = Math.min(next, p.since + OFFLINE_GRACE_MS - now);
      }
    }
    if (next < Infinity) this.schedule(Math.max(next, PRESENCE_TICK_MS));

    // last_seen_at first: whoever sees the user offline then also sees when it was last seen
    const seenAt = new Map<string, string>();
    if (down.length) {
      try {
        const seen = await rows<{ id: string; last_seen_at: Date }>(
          this.db.manager,
          `UPDATE users SET last_seen_at = now() WHERE id = ANY($1::uuid[]) RETURNING id, last_seen_at`,
          [down.map((p) => p.who.userId)],
        );
        for (const r of seen) seenAt.set(r.id, new Date(r.last_seen_at).toISOString());
      } catch (e) {
        this.logger.debug(`last_seen_at not written: ${String(e)}`);
      }
    }
    // users who came back while the UPDATE ran are counted again already and stay online
    this.store.release(down.filter((p) => !this.sockets.has(p.who.userId)).map((p) => p.who.userId));
    await this.store.flush();
    const elsewhere = down.length
      ? await this.store.onlineOf(down.map((p) => p.who.userId))
      : new Set<string>();
    if (this.closed) return;

    const news: PresenceNews = { ts: new Date().toISOString(), changes: [] };
    for (const p of up) {
      const rooms = this.roomsOf(p.who.userId);
      if (!rooms) continue; // gone again meanwhile: its close is pending
      this.announced.add(p.who.userId);
      if (rooms.length)
        news.changes.push({
          user_id: p.who.userId,
          rooms,
          change: { external_id: p.who.externalId, online: true, last_seen_at: null },
        });
    }
    for (const p of down) {
      const userId = p.who.userId;
      if (this.sockets.has(userId)) continue; // back meanwhile: pending again, decided next tick
      const wasAnnounced = this.announced.delete(userId);
      // online on another instance: that one announces when its last socket closes
      if (!wasAnnounced || elsewhere.has(userId) || !p.rooms.length) continue;
      news.changes.push({
        user_id: userId,
        rooms: p.rooms,
        change: { external_id: p.who.externalId, online: false, last_seen_at: seenAt.get(userId) ?? news.ts },
      });
    }
    news.changes = await this.smallOnly(news.changes);
    if (this.closed) return;
    if (news.changes.length) {
      this.deliver(news);
      // one message for the whole tick; every other instance delivers it to its own sockets
      if (this.redis.enabled) this.server.serverSideEmit('presence.news', news);
    }
    this.sendBatches();
  }

  /**
   * Presence flows only through channels that are not large (CONTRACT §29): the large channels' rooms
   * leave each change, one query for the tick's rooms. With
   * the database away the channels last seen large stay left out. A change left with no room still
   * reaches the user's subscribers.
   */
  private async smallOnly(changes: PresenceNews['changes']): Promise<PresenceNews['changes']> {
    const rooms = [...new Set(changes.flatMap((c) => c.rooms))];
    if (!rooms.length) return changes;
    try {
      const found = await rows<{ id: string; large: boolean }>(
        this.db.manager,
        `SELECT c.id, ${largeChannelSql('c', 'w.settings')} AS large FROM channels c JOIN workspaces w ON w.id = c.workspace_id
          WHERE c.id = ANY($1::uuid[])`,
        [rooms.map((r) => r.slice(CHANNEL_PREFIX.length))],
      );
      for (const r of found) {
        if (r.large) this.largeRooms.add(channelRoom(r.id));
        else this.largeRooms.delete(channelRoom(r.id));
      }
    } catch (e) {
      // the database away: the channels last seen large stay large (a large room never gets the N² storm)
      this.logger.debug(`large channels not read: ${String(e)}`);
    }
    return changes.map((c) => ({ ...c, rooms: c.rooms.filter((r) => !this.largeRooms.has(r)) }));
  }

  /**
   * Delivers a tick's announcements (this instance's or another's) to the sockets of this instance:
   * `presence.changed` per change to the channel rooms, except the user and the `batch`/`none`
   * sockets (skipped when there are only those here); batch entries gathered for `sendBatches`.
   */
  private deliver(news: PresenceNews): void {
    if (this.closed || !this.server) return;
    const nsp = this.server.of('/');
    const batch = nsp.adapter.rooms.get(presenceRoom('batch'))?.size ?? 0;
    const none = nsp.adapter.rooms.get(presenceRoom('none'))?.size ?? 0;
    for (const { user_id, rooms, change } of news.changes) {
      const env = { v: 1 as const, type: 'presence.changed' as const, data: change, ts: news.ts };
      // partners and subscribers in one emit: a socket that is both hears it once
      if (nsp.sockets.size > batch + none)
        this.server.local
          .to([...rooms, presenceSubRoom(user_id, 'each')])
          .except([userRoom(user_id), presenceRoom('batch'), presenceRoom('none')])
          .emit('presence.changed', env);
      const others = presenceSubRoom(user_id, 'batch');
      if (nsp.adapter.rooms.has(others))
        this.server.local.to(others).except(userRoom(user_id)).emit('presence.changed', env);
    }
    if (!batch) return;
    for (const { rooms, change } of news.changes) {
      for (const r of rooms) {
        const users = this.batched.get(r);
        if (users) users.set(change.external_id, change);
        else this.batched.set(r, new Map([[change.external_id, change]]));
      }
    }
  }

  /** `presence.batch` to this instance's batch sockets, per channel: at most once per BATCH_INTERVAL_MS. */
  private sendBatches(): void {
    if (!this.batched.size || this.closed || !this.server) return;
    const wait = this.lastBatchAt + BATCH_INTERVAL_MS - Date.now();
    if (wait > 0) {
      this.schedule(wait);
      return;
    }
    const batched = this.batched;
    this.batched = new Map();
    this.lastBatchAt = Date.now();
    const ts = new Date().toISOString();
    for (const [room, users] of batched) {
      const data: PresenceBatch = { online: [], offline: [] };
      for (const c of users.values()) {
        if (c.online) data.online.push(c.external_id);
        else data.offline.push({ external_id: c.external_id, last_seen_at: c.last_seen_at ?? ts });
      }
      this.server.local.to(presenceBatchRoom(room)).emit('presence.batch', {
        v: 1,
        type: 'presence.batch',
        channel_id: room.slice(CHANNEL_PREFIX.length),
        data,
        ts,
      });
    }
  }
}

/** The presence mode a socket asked for at the handshake (`auth.presence` or `?presence=`); `each` by default. */
export function presenceModeOf(socket: AppSocket): PresenceMode {
  const auth = socket.handshake.auth as { presence?: unknown } | undefined;
  const asked = auth?.presence ?? socket.handshake.query.presence;
  return asked === 'batch' || asked === 'none' ? asked : 'each';
}
