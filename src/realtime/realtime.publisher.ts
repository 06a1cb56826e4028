import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { encodeLogCursor, EVENT_COLUMNS, EventLogReader, LogCursor } from '../events/event-log.reader';
import { LiveMessage, LivePublish, ROOM_MOVE_GRACE_MS } from '../events/live-publish';
import { PublishLedger } from '../events/publish-notes';
import { LogTail, LogTailPart, PartResult, PassInfo, PassStatement } from '../events/log-tail';
import { fromJson, type StoredEvent, type StoredEventJson } from '../events/event-types';
import { SavedCursor } from '../events/saved-cursor';
import { LeaderLease, Leadership } from '../infra/database/leadership';
import { RedisService } from '../infra/redis/redis.module';
import { Metrics } from '../ops/metrics';
import {
  ATTR,
  inSpan,
  inSpanSync,
  linksToWriters,
  ROOT_CONTEXT,
  SpanKind,
  tracingOn,
} from '../ops/tracing/tracing';
import type { MessageView } from '../contract/events';
import type { AnyEnvelope } from '../contract/realtime';
import { messageIdOf, EnvelopeBuilder } from './envelopes';
import { channelRoom, isUserScoped, send, userRoom } from './realtime-events';
import { RealtimeGateway } from './realtime.gateway';

const BATCH = 500;
/** The position is written with a later pass at most this often (a new leader repeats at most this much). */
const SAVE_EVERY_MS = 500;
/**
 * A new leader that finds events older than this after the saved position (no instance published for
 * that long: the database or every instance was down) starts from the head of the log instead: clients
 * that were connected through it catch up with /v1/me/sync, and fresh events do not queue behind a
 * backlog nobody is waiting for.
 */
const STALE_BACKLOG_SECONDS = 120;
/**
 * A message.created that no instance has noted yet (PublishLedger) is held this long for the note of
 * the instance that committed it, which publishes it live; then the publisher sends it itself (that
 * instance crashed between commit and publish, or its note was lost).
 */
export const LIVE_GRACE_MS = 1_000;
/** A pass waits this long at most for Redis to answer its publishes (else they count as refused). */
const SETTLE_PUBLISHES_MS = 500;

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

/** The messages the events of rt_ev are about, in SQL (as messageIdOf); anything that is not a uuid counts as none. */
const MESSAGE_ID_SQL = `SELECT CASE WHEN x.m ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN x.m::uuid END AS id
   FROM (SELECT COALESCE(e.payload->'message'->>'id', e.payload->'reaction'->>'message_id', e.payload->>'message_id') AS m FROM rt_ev e) x`;

interface RealtimeOutput {
  events: StoredEventJson[];
  /** message id → users who block its author */
  blockers: { message_id: string; blocker_id: string }[];
  /** The shadowed messages of the batch (CONTRACT §19) and their authors: only the author hears of them. */
  shadowed: { message_id: string; user_id: string | null }[];
}

/** Who an event reaches besides its room's rule: the rooms left out, or (a shadowed message) the only rooms told. */
interface Audience {
  except: string[];
  only?: string[];
}

const EVERYONE: Audience = { except: [] };

/** The user rooms a channel's room gained and lost lately (RoomMoves). */
interface Moved {
  joined: string[];
  left: string[];
}

/**
 * The room moves of the last ROOM_MOVE_GRACE_MS, per channel room: an emit to the room also goes to
 * the user rooms that joined it and leaves out those that left. A move reaches another instance
 * through Redis, and with the sharded adapter an emit to one room travels on that room's own channel,
 * which an instance with no socket in the room subscribes to only once the join has reached it, and
 * which is not ordered with the user room's channel that carried a leave. With the user rooms the emit
 * travels on the adapter's main channel and reaches the joined member's sockets whether or not their
 * join has landed yet, and never the left member's, whenever their leave lands. Each user's move expires
 * on its own (a room with steady churn keeps only the last grace's movers); a new leader starts with
 * none (the moves of the grace before a takeover are not carried over).
 */
export class RoomMoves {
  /** room → user room → [joined?, until] */
  private readonly rooms = new Map<string, Map<string, [boolean, number]>>();
  private added = 0;

  joined(room: string, user: string, now = Date.now()): void {
    this.move(room, user, true, now);
  }

  left(room: string, user: string, now = Date.now()): void {
    this.move(room, user, false, now);
  }

  /** The room's moves still within their grace, or undefined when there are none. */
  of(room: string, now = Date.now()): Moved | undefined {
    const users = this.rooms.get(room);
    if (!users) return undefined;
    const out: Moved = { joined: [], left: [] };
    for (const [user, [joined, until]] of users) {
      if (until <= now) users.delete(user);
      else (joined ? out.joined : out.left).push(user);
    }
    if (!users.size) {
      this.rooms.delete(room);
      return undefined;
    }
    return out;
  }

  private move(room: string, user: string, joined: boolean, now: number): void {
    if (++this.added % 1024 === 0) for (const r of [...this.rooms.keys()]) this.of(r, now);
    let users = this.rooms.get(room);
    if (!users) this.rooms.set(room, (users = new Map<string, [boolean, number]>()));
    users.delete(user); // kept in the order of the latest moves
    users.set(user, [joined, now + ROOM_MOVE_GRACE_MS]);
  }
}

/** An event read from the log, not yet behind the saved cursor. */
interface Read {
  e: StoredEvent;
  audience: Audience;
  /**
   * When its grace for a note starts: when it was written (its created_at, the transaction's start, aged
   * on the database's clock), at most LIVE_GRACE_MS before it was read. A note comes soon after the
   * commit or never: what was committed while Redis was away (read once it is back) has waited enough.
   */
  since: number;
  /** Waiting for its instance's note (PublishLedger); else handed on. */
  held: boolean;
}

/**
 * Publishes the event log to sockets, after commit, in log order, except what the committing instance
 * already published live (LivePublish; the notes in PublishLedger), and publishes a send live for
 * LivePublish on this instance (`publishLive`), through the same rules. One instance publishes at a time
 * (Leadership); through the Redis adapter its emits and room moves reach every instance. It reads the
 * log as its part of the shared log pass (LogTail): up to BATCH events after its cursor, below the
 * settled bound, with the users who block each message's author, in the pass's one statement. Its
 * position is a SavedCursor in the database (written with a later pass, at most every SAVE_EVERY_MS),
 * so a new leader, or the same one after Redis came back, resumes where publishing stopped: at least
 * once (a takeover may repeat the last half second; clients drop a seq they already have). A crash
 * between commit and publish loses nothing: the event stays in the log and is published by the next
 * leader (or fetched with /v1/me/sync).
 */
@Injectable()
export class RealtimePublisher implements OnApplicationBootstrap, BeforeApplicationShutdown, LogTailPart {
  readonly name = 'realtime';
  private readonly logger = new Logger('RealtimePublisher');
  private readonly lease: LeaderLease;
  private readonly cursor: SavedCursor;
  private loading = false;
  private registered = false;
  /** Where the next pass reads from: ahead of the saved cursor while events are held. */
  private readAt: LogCursor | null = null;
  /** Read events from the first one still held, in log order (the saved cursor stays before them). */
  private waiting: Read[] = [];
  private detachLive?: () => void;
  private detachSteady?: () => void;
  /** After Redis came back, sends go through the log until then (what it still holds goes out first, in order). */
  private liveAfter = 0;
  private readonly moves = new RoomMoves();

  constructor(
    private readonly reader: EventLogReader,
    private readonly envelopes: EnvelopeBuilder,
    private readonly gateway: RealtimeGateway,
    private readonly tail: LogTail,
    db: DataSource,
    leadership: Leadership,
    private readonly metrics: Metrics,
    private readonly live: LivePublish,
    private readonly ledger: PublishLedger,
    private readonly redis: RedisService,
  ) {
    this.cursor = new SavedCursor(db, 'realtime');
    this.lease = leadership.lease('realtime-publisher', (leading) => this.leading(leading));
  }

  onApplicationBootstrap(): void {
    this.registered = true;
    this.detachLive = this.live.attach((m) => this.publishLive(m));
    // what was held while the adapter's link was down goes out as soon as it is steady again
    this.detachSteady = this.redis.fanout.onSteady(() => this.tail.nudge());
    let connected = this.redis.ready;
    this.redis.client?.on('ready', () => {
      if (connected) this.liveAfter = Date.now() + 2 * LIVE_GRACE_MS;
      connected = true;
    });
    this.tail.register(this);
    this.lease.start();
  }

  /** Before Redis and the database close: the pass in flight finishes, then the lease is given up. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.registered) return;
    this.registered = false;
    this.detachLive?.();
    this.detachSteady?.();
    await this.tail.unregister(this);
    if (this.lease.isLeader)
      await this.cursor.flush().catch((e: unknown) => this.logger.warn(`saving the cursor: ${String(e)}`));
    await this.lease.stop();
  }

  private leading(leading: boolean): void {
    this.cursor.reset();
    this.readAt = null;
    this.waiting = [];
    this.metrics.followerAt('realtime'); // the leader, here or elsewhere, reports the lag
    if (!leading || !this.registered) return;
    this.loading = true;
    this.startCursor()
      .then(() => {
        if (!this.lease.isLeader) return this.cursor.reset();
        this.readAt = this.cursor.at;
        this.logger.debug(`publishing from ${this.cursor.at ? encodeLogCursor(this.cursor.at) : '-'}`);
        this.tail.nudge();
      })
      .catch((e: unknown) => {
        this.cursor.reset();
        this.logger.warn(`loading the cursor: ${String(e)}`);
      })
      .finally(() => (this.loading = false));
  }

  private async startCursor(): Promise<void> {
    const saved = await this.cursor.load();
    if (!saved || !(await this.reader.staleAfter(saved, STALE_BACKLOG_SECONDS))) return;
    const head = await this.reader.head();
    this.logger.warn(
      `nothing was published for over ${STALE_BACKLOG_SECONDS} s: starting from the head of the log`,
    );
    this.cursor.advance(head);
  }

  build(q: PassStatement): string | null {
    const at = this.readAt;
    if (!this.registered || !this.lease.isLeader || !at || this.loading) return null;
    // Redis away (or not back long enough for every instance to subscribe again): what would be
    // published now would reach this instance's sockets only. Hold it; it goes out, in order, once
    // the link is steady (onSteady nudges the tail).
    if (!this.redis.fanout.steady()) return null;
    this.cursor.saveInto(q, this.cursor.sinceSave >= SAVE_EVERY_MS);
    q.cte(
      'rt_ev',
      `SELECT ${EVENT_COLUMNS}${tracingOn() ? ', e.traceparent' : ''} FROM events e
        WHERE (e.tx_id, e.position) > (${q.param(at.txId, 'xid8')}, ${q.param(at.position, 'bigint')}) AND e.tx_id < ${q.bound}
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    // per message of the batch, by index (messages by id, then blocks by blocked_id); OFFSET 0 keeps the
    // lateral lookups from being flattened into joins the planner could turn into scans of those tables.
    // The same rule as the read paths (messages/visibility.ts), applied per socket room: blockers are
    // left out, and a shadowed message goes to its author's room alone.
    q.cte(
      'rt_msg',
      `SELECT x.id AS message_id, m.user_id, m.shadowed
         FROM (SELECT DISTINCT id FROM (${MESSAGE_ID_SQL}) i WHERE id IS NOT NULL) x
         CROSS JOIN LATERAL (SELECT msg.user_id, msg.shadowed FROM messages msg WHERE msg.id = x.id OFFSET 0) m`,
    );
    q.cte(
      'rt_blk',
      `SELECT m.message_id, b.blocker_id FROM rt_msg m
         CROSS JOIN LATERAL (SELECT b.blocker_id FROM blocks b WHERE b.blocked_id = m.user_id OFFSET 0) b`,
    );
    return `json_build_object(
      'events', (SELECT COALESCE(json_agg(x ORDER BY x.tx_id::xid8, x.position), '[]') FROM rt_ev x),
      'blockers', (SELECT COALESCE(json_agg(b), '[]') FROM rt_blk b),
      'shadowed', (SELECT COALESCE(json_agg(json_build_object('message_id', m.message_id, 'user_id', m.user_id)), '[]')
                     FROM rt_msg m WHERE m.shadowed))`;
  }

  async apply(output: unknown, pass: PassInfo): Promise<PartResult> {
    const out = output as RealtimeOutput;
    const events = out.events.map(fromJson);
    this.metrics.followerAt('realtime', events[0], pass.head);
    this.cursor.passed();
    if (!this.readAt || (!events.length && !this.waiting.length))
      return { events: events.length, more: false };
    const blockers = new Map<string, string[]>();
    for (const r of out.blockers)
      blockers.set(r.message_id, [...(blockers.get(r.message_id) ?? []), userRoom(r.blocker_id)]);
    const shadowed = new Map<string, string[]>();
    for (const r of out.shadowed ?? []) shadowed.set(r.message_id, r.user_id ? [userRoom(r.user_id)] : []);
    const now = Date.now();
    // what this pass decides is kept only once its emits went out: if they fail, the next pass reads
    // the same events again, and the saved cursor has not moved past them
    const before = { readAt: this.readAt, waiting: this.waiting.map((r) => ({ ...r })) };
    for (const e of events) {
      const id = messageIdOf(e) ?? '';
      const only = shadowed.get(id);
      this.waiting.push({
        e,
        audience: only ? { except: [], only } : { except: blockers.get(id) ?? [] },
        since: now - Math.min(LIVE_GRACE_MS, Math.max(0, pass.dbNowMs - e.created_at.getTime())),
        held: true,
      });
    }
    const last = events[events.length - 1];
    if (last) this.readAt = { txId: last.tx_id, position: Number(last.position) };
    const { out: ready, behind } = this.handOn(now);
    const fanout = this.redis.fanout;
    const mark = fanout.mark();
    try {
      await this.tracedPublish(ready, pass.startedMs);
      // the adapter publishes without waiting: a refusal, an answer that does not come, or a drop of
      // the link meanwhile (a queued publish may be sent on reconnecting, before the other instances
      // subscribed again) means another instance may have missed these events: they are read and
      // published again (sockets that got them already drop a seq they have)
      if (!(await fanout.reachedAll(mark, SETTLE_PUBLISHES_MS)))
        throw new Error('a publish may not have reached every instance: the batch goes out again');
    } catch (e) {
      this.readAt = before.readAt;
      this.waiting = before.waiting;
      throw e;
    }
    if (behind) this.cursor.advance(behind);
    for (const e of events) this.metrics.events.labels(e.type).inc();
    return { events: events.length, more: events.length >= BATCH };
  }

  /**
   * Decides each waiting event: what an instance published live is done; what it left to the log, and
   * every other event, is handed on now; a message.created with no note yet waits for one,
   * LIVE_GRACE_MS at most, and the later events of its channel wait behind it (a channel's events go
   * out in order). `behind` is the last event before the first one still held: the saved cursor moves
   * there once the emits went out, so a new leader reads the held ones again.
   */
  private handOn(now: number): { out: Read[]; behind: LogCursor | null } {
    const out: Read[] = [];
    /** Channels with an event still held: their later events wait behind it. */
    const blocked = new Set<string>();
    for (const r of this.waiting) {
      if (!r.held) continue;
      const { e } = r;
      if (e.channel_id && blocked.has(e.channel_id)) continue;
      const noted = e.channel_id && e.seq !== null ? this.ledger.lookup(e.channel_id, Number(e.seq)) : false;
      if (noted === undefined && e.type === 'message.created') {
        // just after Redis came back no instance publishes sends live (publishLive), and their notes of
        // that (sent as Redis came back) may have missed this instance's subscription: no note to wait for
        if (now - r.since < LIVE_GRACE_MS && now >= this.liveAfter) {
          blocked.add(e.channel_id!);
          continue;
        }
        if (now >= this.liveAfter) this.metrics.heldTooLong.inc();
      }
      r.held = false;
      if (noted !== true) out.push(r);
    }
    let done = 0;
    while (done < this.waiting.length && !this.waiting[done]!.held) done++;
    const last = this.waiting[done - 1];
    this.waiting = this.waiting.slice(done);
    return { out, behind: last ? { txId: last.e.tx_id, position: Number(last.e.position) } : null };
  }

  /** LivePublish's sink: a send this instance committed, to the sockets now (the log's publisher skips it). */
  publishLive(m: LiveMessage): boolean {
    // with Redis away (or just back) the notes of other instances' sends were lost and the log's
    // publisher holds them for a while: a live emit would overtake them. Leave sends to the publisher,
    // which keeps each channel in order, until what it holds has gone out.
    if (
      !this.gateway.server ||
      (this.redis.enabled &&
        (!this.redis.ready || Date.now() < this.liveAfter || !this.redis.fanout.steady()))
    )
      return false;
    const { shadowed: _, ...view } = m.view;
    const rendered = new Map<string, MessageView>([[view.id, view]]);
    const audience: Audience = m.shadowed
      ? { except: [], only: m.authorId ? [userRoom(m.authorId)] : [] }
      : { except: m.blockerIds.map(userRoom) };
    for (const e of m.events) this.emit(e, this.envelopes.one(e, rendered) ?? undefined, audience, rendered);
    this.metrics.liveSends.inc();
    return true;
  }

  /** Traced: the pass's publish in a span of its own, linked to the span that wrote each event. */
  private tracedPublish(reads: Read[], startedMs: number): Promise<void> {
    if (!tracingOn() || !reads.length) return this.publish(reads);
    return inSpan(
      'chat.publish',
      {
        parent: ROOT_CONTEXT,
        startTime: startedMs,
        links: linksToWriters(reads.map((r) => r.e)),
        attributes: { [ATTR.events]: reads.length },
      },
      () => this.publish(reads),
    );
  }

  private async publish(reads: Read[]): Promise<void> {
    const io = this.gateway.server;
    if (!io || !reads.length) return;
    for (const { e } of reads) if (e.type === 'user.banned') this.banned(e);
    const relevant = reads.filter(({ e }) => e.channel_id || isUserScoped(e));
    const audience = new Map(relevant.map((r) => [r.e, r.audience]));
    const ordered = inSeqOrder(relevant.map((r) => r.e));
    if (!ordered.length) return;
    const byWorkspace = new Map<string, StoredEvent[]>();
    for (const e of ordered) byWorkspace.set(e.workspace_id, [...(byWorkspace.get(e.workspace_id) ?? []), e]);
    for (const group of byWorkspace.values()) {
      const envelopes = await this.envelopes.build(group, null);
      group.forEach((e, i) => this.emit(e, envelopes[i] ?? undefined, audience.get(e) ?? EVERYONE));
    }
  }

  /**
   * CONTRACT §19: a workspace-wide ban (not a shadow ban) closes the user's sockets on every instance
   * (through the adapter); reconnecting is refused at the handshake while the ban lasts.
   */
  private banned(e: StoredEvent<'user.banned'>): void {
    const p = e.payload;
    if (p.channel_id === null && !p.shadow)
      this.gateway.server.in(userRoom(p.user.id)).disconnectSockets(true);
  }

  /** Traced: each event's emit (and the adapter's publish to Redis under it) is a span. */
  private emit(
    e: StoredEvent,
    env: AnyEnvelope | undefined,
    audience: Audience,
    rendered?: Map<string, MessageView>,
  ): void {
    if (!tracingOn()) return this.emitNow(e, env, audience, rendered);
    inSpanSync(
      'chat.emit',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'socket.io',
          'messaging.operation.type': 'send',
          [ATTR.eventId]: e.id,
          [ATTR.eventType]: e.type,
          [ATTR.channelId]: e.channel_id ?? undefined,
          [ATTR.seq]: e.seq ?? undefined,
        },
      },
      () => this.emitNow(e, env, audience, rendered),
    );
  }

  private emitNow(
    e: StoredEvent,
    env: AnyEnvelope | undefined,
    audience: Audience,
    rendered?: Map<string, MessageView>,
  ): void {
    const io = this.gateway.server;
    if (!e.channel_id) {
      // a large channel's member event (CONTRACT §29) is addressed to the member and the admins, with
      // no seq: the member's sockets still move in or out of the channel's room around it
      const moved =
        e.type === 'member.joined' || e.type === 'member.left'
          ? { room: channelRoom(e.payload.channel_id), user: userRoom(e.payload.user_id) }
          : null;
      if (moved && e.type === 'member.joined') this.join(moved.user, moved.room);
      // user-scoped: only the audience's own sockets, on every instance (through the adapter); never
      // an empty room list, which would be every socket
      const rooms = (e.audience ?? []).map(userRoom);
      if (env && rooms.length) send(io.to(rooms), env);
      if (moved && e.type === 'member.left') this.leave(moved.user, moved.room);
      return;
    }
    const room = channelRoom(e.channel_id);
    // room moves first, so the event itself already reaches (or no longer reaches) the member
    const joining =
      e.type === 'channel.created' || e.type === 'member.joined' ? (e.audience ?? []).map(userRoom) : [];
    for (const user of joining) this.join(user, room);
    const leaving = e.type === 'member.left' ? userRoom(e.payload.user_id) : null;
    if (env) {
      this.metrics.publishLag.observe((Date.now() - e.created_at.getTime()) / 1000);
      const { only, except } = audience;
      if (only) {
        if (only.length) send(io.to(only), env);
      } else {
        // with the rooms of the members who joined lately (the same sockets once their join has landed)
        // and without those who left (RoomMoves)
        const moved = this.moves.of(room);
        // (a member leaving now gets this event through the room, and once only)
        const joined = moved?.joined.filter((u) => u !== leaving) ?? [];
        const rooms = joined.length ? [room, ...joined] : room;
        const left = moved?.left.length ? [...except, ...moved.left] : except;
        send(left.length ? io.to(rooms).except(left) : io.to(rooms), env);
        if (leaving) send(io.to(leaving).except(room), env);
        if (e.type === 'message.mentioned' && e.payload.mentions.length)
          void this.notifyMentions(e, except, rendered);
      }
    }
    if (leaving) this.leave(leaving, room);
    if (e.type === 'channel.deleted') io.in(room).socketsLeave(room);
  }

  /**
   * A user's sockets into a channel's room: locally at once (the adapter would apply our own request
   * only when it comes back from Redis, after the emit that follows), and on the other instances through
   * Redis, ahead of that emit; kept in RoomMoves for the grace.
   */
  private join(user: string, room: string): void {
    const io = this.gateway.server;
    io.local.in(user).socketsJoin(room);
    io.in(user).socketsJoin(room);
    this.moves.joined(room, user);
  }

  /** A user's sockets out of a channel's room (after the event that tells them), kept in RoomMoves for the grace. */
  private leave(user: string, room: string): void {
    this.gateway.server.in(user).socketsLeave(room);
    this.moves.left(room, user);
  }

  /** notification.mention goes to each mentioned user's own room, with the message. */
  private async notifyMentions(
    e: StoredEvent<'message.mentioned'>,
    blockerRooms: string[],
    rendered?: Map<string, MessageView>,
  ): Promise<void> {
    const p = e.payload;
    const message = (rendered ?? (await this.envelopes.messages(e.workspace_id, [p.message_id], null))).get(
      p.message_id,
    );
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
