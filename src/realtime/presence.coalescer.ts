import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { rows } from '../infra/database/sql';
import { PresenceStore } from './presence.store';
import { AppServer, AppSocket, channelRoom, PresenceBatch, presenceBatchRoom, PresenceChange, PresenceMode, presenceRoom, SocketData, userRoom } from './realtime-events';

/** Presence changes are gathered for this long and then announced together. */
export const PRESENCE_TICK_MS = 200;
/** A user whose last socket closed is announced offline only if no socket came back meanwhile. */
export const OFFLINE_GRACE_MS = 1_000;
/**
 * `presence.batch` goes out with the tick, except in a storm (a tick with this many changes here):
 * then batches gather for up to BATCH_STORM_MS, each user's last state per channel, and go out
 * together, so a thousand connects cost each batch socket a few frames rather than one per tick.
 */
export const BATCH_STORM_CHANGES = 32;
export const BATCH_STORM_MS = 1_000;

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
 * then per changed user one emit to its channel rooms (the room set comes from its sockets' rooms, no
 * query; the adapter fans out), plus per channel room one `presence.batch` to the room of its sockets
 * that asked for batches (gathered over several ticks in a storm: BATCH_STORM_MS). No per-member work anywhere: the cost is O(changes) emits; what the adapter
 * then writes is one frame per (receiver, change) for `each` sockets, one per (receiver, channel, tick)
 * for `batch` sockets.
 */
@Injectable()
export class PresenceCoalescer implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Presence');
  private server?: AppServer;
  /** counted sockets per user on this instance */
  private readonly sockets = new Map<string, Set<AppSocket>>();
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
  private batchedSince = 0;

  constructor(
    private readonly store: PresenceStore,
    private readonly db: DataSource,
  ) {}

  attach(server: AppServer): void {
    this.server = server;
  }

  /** Shutting down: no more announcements (sockets close with the server, Redis is about to). */
  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.pending.clear();
    await this.running;
  }

  /** The channel rooms the user's sockets here are in; null when none is counted yet. */
  roomsOf(userId: string): string[] | null {
    const set = this.sockets.get(userId);
    if (!set?.size) return null;
    const rooms = new Set<string>();
    for (const s of set) for (const r of s.rooms) if (r.startsWith(CHANNEL_PREFIX)) rooms.add(r);
    return [...rooms];
  }

  /** A socket whose channel rooms are joined: counted now, announced on the next tick. */
  joined(socket: AppSocket): void {
    if (this.closed) return;
    const { userId } = socket.data;
    let set = this.sockets.get(userId);
    if (!set) this.sockets.set(userId, (set = new Set()));
    if (set.has(socket)) return;
    set.add(socket);
    this.store.add(userId);
    this.touch(socket.data, 0, []);
  }

  /** A socket is closing (call it from `disconnecting`, while its rooms are still there). */
  leaving(socket: AppSocket): void {
    if (this.closed) return;
    const { userId } = socket.data;
    const set = this.sockets.get(userId);
    if (!set?.delete(socket)) return; // never counted (closed before its rooms were joined)
    if (set.size) {
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
      this.running = this.running.then(() => this.tick()).catch((e: unknown) => this.logger.warn(`presence tick failed: ${String(e)}`));
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
        const seen = await rows<{ id: string; last_seen_at: Date }>(this.db.manager, `UPDATE users SET last_seen_at = now() WHERE id = ANY($1::uuid[]) RETURNING id, last_seen_at`, [
          down.map((p) => p.who.userId),
        ]);
        for (const r of seen) seenAt.set(r.id, new Date(r.last_seen_at).toISOString());
      } catch (e) {
        this.logger.debug(`last_seen_at not written: ${String(e)}`);
      }
    }
    // users who came back while the UPDATE ran are counted again already and stay online
    this.store.release(down.filter((p) => !this.sockets.has(p.who.userId)).map((p) => p.who.userId));
    await this.store.flush();
    const elsewhere = down.length ? await this.store.onlineOf(down.map((p) => p.who.userId)) : new Set<string>();
    if (this.closed) return;

    const ts = new Date().toISOString();
    let changes = 0;
    const announce = (who: SocketData, rooms: string[], change: PresenceChange) => {
      if (!rooms.length) return;
      changes++;
      this.server!.to(rooms)
        .except([userRoom(who.userId), presenceRoom('batch'), presenceRoom('none')])
        .emit('presence.changed', { v: 1, type: 'presence.changed', data: change, ts });
      if (!this.batched.size) this.batchedSince = now;
      for (const r of rooms) {
        const users = this.batched.get(r);
        if (users) users.set(change.external_id, change);
        else this.batched.set(r, new Map([[change.external_id, change]]));
      }
    };
    for (const p of up) {
      const rooms = this.roomsOf(p.who.userId);
      if (!rooms) continue; // gone again meanwhile: its close is pending
      this.announced.add(p.who.userId);
      announce(p.who, rooms, { external_id: p.who.externalId, online: true, last_seen_at: null });
    }
    for (const p of down) {
      const userId = p.who.userId;
      if (this.sockets.has(userId)) continue; // back meanwhile: pending again, decided next tick
      const wasAnnounced = this.announced.delete(userId);
      // online on another instance: that one announces when its last socket closes
      if (!wasAnnounced || elsewhere.has(userId)) continue;
      announce(p.who, p.rooms, { external_id: p.who.externalId, online: false, last_seen_at: seenAt.get(userId) ?? ts });
    }
    if (!this.batched.size) return;
    if (changes >= BATCH_STORM_CHANGES && now - this.batchedSince < BATCH_STORM_MS) {
      this.schedule(PRESENCE_TICK_MS); // a quieter tick, or the storm limit, sends them
      return;
    }
    const batched = this.batched;
    this.batched = new Map();
    for (const [room, users] of batched) {
      const data: PresenceBatch = { online: [], offline: [] };
      for (const c of users.values()) {
        if (c.online) data.online.push(c.external_id);
        else data.offline.push({ external_id: c.external_id, last_seen_at: c.last_seen_at ?? ts });
      }
      this.server.to(presenceBatchRoom(room)).emit('presence.batch', { v: 1, type: 'presence.batch', channel_id: room.slice(CHANNEL_PREFIX.length), data, ts });
    }
  }
}

/** The presence mode a socket asked for at the handshake (`auth.presence` or `?presence=`); `each` by default. */
export function presenceModeOf(socket: AppSocket): PresenceMode {
  const auth = socket.handshake.auth as { presence?: unknown } | undefined;
  const asked = auth?.presence ?? socket.handshake.query.presence;
  return asked === 'batch' || asked === 'none' ? asked : 'each';
}
