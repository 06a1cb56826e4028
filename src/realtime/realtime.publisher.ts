import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { decodeLogCursor, encodeLogCursor, EventLogReader, LogCursor } from '../events/event-log.reader';
import { EventNotifier } from '../events/event-notifier';
import type { StoredEvent } from '../events/event-types';
import { RedisService } from '../infra/redis/redis.module';
import { messageIdOf, EnvelopeBuilder } from './envelopes';
import { channelRoom, Envelope, ServerEventName, userRoom } from './realtime-events';
import { RealtimeGateway } from './realtime.gateway';

const POLL_MS = 250;
const BATCH = 500;
const LEASE_MS = 10_000;

/**
 * The log is read in transaction-id order, but a channel's seq is taken under the channel row lock,
 * in lock order, which can differ (a transaction that started earlier may get the lock later). Put
 * each channel's events of a batch back in seq order, keeping the slots the channel had in the
 * batch, so a client sees seq rise and a jump only where it really missed something.
 */
export function inSeqOrder(events: StoredEvent[]): StoredEvent[] {
  const slots = new Map<string, number[]>();
  events.forEach((e, i) => {
    if (!e.channel_id || e.seq === null) return;
    const list = slots.get(e.channel_id);
    if (list) list.push(i);
    else slots.set(e.channel_id, [i]);
  });
  const out = [...events];
  for (const idx of slots.values()) {
    if (idx.length < 2) continue;
    const sorted = idx.map((i) => events[i]!).sort((a, b) => Number(a.seq) - Number(b.seq));
    idx.forEach((i, k) => (out[i] = sorted[k]!));
  }
  return out;
}

/**
 * Publishes the event log to sockets, after commit, in log order. One instance publishes at a time
 * (a Redis lease); through the Redis adapter its emits and room moves reach every instance. Its cursor
 * is kept in Redis so a new leader resumes where the old one stopped. A crash between commit and
 * publish loses nothing: the event stays in the log and clients can fetch it with /v1/me/sync.
 */
@Injectable()
export class RealtimePublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RealtimePublisher');
  private cursor: LogCursor | null = null;
  private loopDone?: Promise<void>;
  private stopped = false;
  private wake?: () => void;
  private leader = false;
  private unsubscribe?: () => void;

  constructor(
    private readonly reader: EventLogReader,
    private readonly envelopes: EnvelopeBuilder,
    private readonly gateway: RealtimeGateway,
    private readonly notifier: EventNotifier,
    private readonly redis: RedisService,
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(k: string) {
    return `${this.redis.prefix}realtime:${k}`;
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.notifier.onCommitted(() => this.wake?.());
    this.loopDone = this.loop();
  }

  /** Before Redis and the database close: stop the loop and let the batch in flight finish. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.wake?.();
    await this.loopDone;
    if (this.leader && this.redis.client) {
      await this.redis.client.eval(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`, 1, this.key('leader'), this.config.SERVICE_ROLE + process.pid).catch(() => undefined);
    }
  }

  private async acquire(): Promise<boolean> {
    const client = this.redis.client;
    if (!client) return true;
    const me = this.config.SERVICE_ROLE + process.pid;
    const ok = await client
      .eval(
        `local v = redis.call('get', KEYS[1])
         if v == false or v == ARGV[1] then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
         return 0`,
        1,
        this.key('leader'),
        me,
        LEASE_MS,
      )
      .catch(() => 0);
    return ok === 1;
  }

  private async loop(): Promise<void> {
    let lastLease = 0;
    while (!this.stopped) {
      try {
        if (Date.now() - lastLease > LEASE_MS / 3) {
          const was = this.leader;
          this.leader = await this.acquire();
          lastLease = Date.now();
          if (this.leader && !was) this.cursor = await this.startCursor();
          this.logger.debug(`leader=${this.leader} cursor=${this.cursor ? encodeLogCursor(this.cursor) : "-"}`);
        }
        if (this.leader && this.cursor) {
          const events = await this.reader.after(this.cursor, BATCH);
          if (events.length) this.logger.debug(`read ${events.length} events after ${encodeLogCursor(this.cursor)}`);
          if (events.length) {
            await this.publish(events);
            this.cursor = { txId: events[events.length - 1]!.tx_id, position: events[events.length - 1]!.position };
            await this.redis.client?.set(this.key('cursor'), encodeLogCursor(this.cursor)).catch(() => undefined);
            if (events.length === BATCH) continue;
          }
        }
      } catch (e) {
        if (!this.stopped) this.logger.warn(`publish loop: ${String(e)}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, POLL_MS);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async startCursor(): Promise<LogCursor> {
    const saved = await this.redis.client?.get(this.key('cursor')).catch(() => null);
    if (saved) {
      try {
        return decodeLogCursor(saved);
      } catch {
        /* fall through */
      }
    }
    return this.reader.head();
  }

  private async publish(events: StoredEvent[]): Promise<void> {
    const io = this.gateway.server;
    if (!io) return;
    const relevant = inSeqOrder(events.filter((e) => e.channel_id));
    if (!relevant.length) return;
    const byWorkspace = new Map<string, StoredEvent[]>();
    for (const e of relevant) byWorkspace.set(e.workspace_id, [...(byWorkspace.get(e.workspace_id) ?? []), e]);
    for (const group of byWorkspace.values()) {
      const envelopes = await this.envelopes.build(group, null);
      const blockers = await this.blockersByMessage(group);
      group.forEach((e, i) => this.emit(e, envelopes[i] ?? undefined, blockers));
    }
  }

  /** For each message an event is about: the rooms of users who block its author. */
  private async blockersByMessage(events: StoredEvent[]): Promise<Map<string, string[]>> {
    const ids = [...new Set(events.map(messageIdOf).filter((x): x is string => !!x))];
    if (!ids.length) return new Map();
    const rows: { message_id: string; blocker_id: string }[] = await this.db.query(
      `SELECT msg.id AS message_id, b.blocker_id FROM messages msg JOIN blocks b ON b.blocked_id = msg.user_id
        WHERE msg.id = ANY($1::uuid[])`,
      [ids],
    );
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.message_id, [...(out.get(r.message_id) ?? []), userRoom(r.blocker_id)]);
    return out;
  }

  private emit(e: StoredEvent, env: Envelope | undefined, blockers: Map<string, string[]>): void {
    const io = this.gateway.server;
    const room = channelRoom(e.channel_id!);
    const p = e.payload as { user_id?: string; mentions?: { user_id: string }[] };
    // room moves first, so the event itself already reaches (or no longer reaches) the member
    if (e.type === 'channel.created' || e.type === 'member.joined') {
      for (const u of e.audience ?? []) {
        // locally at once (the adapter would apply our own request only when it comes back from
        // Redis, after the emit below), and on the other instances through Redis, ahead of the emit
        io.local.in(userRoom(u)).socketsJoin(room);
        io.in(userRoom(u)).socketsJoin(room);
      }
    }
    if (env) {
      const except = blockers.get(messageIdOf(e) ?? '') ?? [];
      const target = except.length ? io.to(room).except(except) : io.to(room);
      (target.emit as (n: ServerEventName, e: Envelope) => boolean)(env.type as ServerEventName, env);
      if (e.type === 'member.left' && p.user_id) {
        (io.to(userRoom(p.user_id)).except(room).emit as (n: ServerEventName, e: Envelope) => boolean)(env.type as ServerEventName, env);
      }
      if (e.type === 'message.mentioned' && p.mentions?.length) {
        void this.notifyMentions(e, except);
      }
    }
    if (e.type === 'member.left' && p.user_id) io.in(userRoom(p.user_id)).socketsLeave(room);
    if (e.type === 'channel.deleted') io.in(room).socketsLeave(room);
  }

  /** notification.mention goes to each mentioned user's own room, with the message. */
  private async notifyMentions(e: StoredEvent, blockerRooms: string[]): Promise<void> {
    const p = e.payload as { message_id: string; mentions: { user_id: string }[] };
    const message = (await this.envelopes.messages(e.workspace_id, [p.message_id], null)).get(p.message_id);
    if (!message) return;
    const rooms = p.mentions.map((x) => userRoom(x.user_id)).filter((r) => !blockerRooms.includes(r));
    if (!rooms.length) return;
    this.gateway.server.to(rooms).emit('notification.mention', {
      v: 1,
      type: 'notification.mention',
      channel_id: e.channel_id!,
      data: { message },
      ts: message.created_at,
    });
  }
}
