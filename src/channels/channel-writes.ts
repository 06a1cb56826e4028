import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid, newId } from '../common/ids';
import { orderChannelWrites } from '../events/channel-order';
import { EventLogService } from '../events/event-log.service';
import { HAS_EVENTS, PUBLISH_NOTES } from '../events/event-notifier';
import type { DomainEventMap, DomainEventType, StoredEvent } from '../events/event-types';
import { LiveMessage, LivePublish } from '../events/live-publish';
import type { PublishNote } from '../events/publish-notes';
import { prepared } from '../infra/database/prepared';
import { CHANNEL_COLUMNS, ChannelRow } from './channels.repository';
import type { MemberRole } from './channel-members.repository';

/** The user a write is done as (CONTRACT §3): the JWT's user, or the backend's `user_external_id`. */
export interface ChannelActor {
  id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
}

/** What a message-targeted write (edit, unsend, react, moderation) needs of the message. */
export interface MessageHead {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  type: 'text' | 'image' | 'file' | 'system';
  attachment_url: string | null;
  deleted_at: Date | null;
  /** Sent while its author was shadow-banned (CONTRACT §19): nobody but the author and the backend sees it. */
  shadowed: boolean;
  /** Seconds since it was sent, by the database's clock (windows are measured there). */
  age_seconds: number;
}

/**
 * Who the write is done as:
 * - `acting`: a user must act: the JWT's user, or the user a backend key names in `user_external_id`
 *   (required then), e.g. a send, a reaction, a read receipt;
 * - `caller`: the JWT's user, or nobody for a backend key (which passes every channel rule), e.g.
 *   channel administration, edit and unsend.
 */
export type ActorRule = { kind: 'acting'; userExternalId: string | undefined } | { kind: 'caller' };

export interface OpenOptions {
  actor: ActorRule;
  /** What the actor must be: a member (403 NOT_A_MEMBER), or an admin of a group to manage (403 FORBIDDEN). */
  need: 'member' | 'manage';
  /** The message the write is about: the channel is the message's (404 `Message` outside the workspace). */
  messageId?: string;
  /** A send's idempotency key: the context says which message it already names. */
  idempotencyKey?: string;
  /**
   * The write sends, edits, reacts to or unsends a message: for a user JWT it is refused in a frozen
   * channel (403 CHANNEL_FROZEN, CONTRACT §17); a backend key and system messages pass.
   */
  messageAct?: boolean;
}

/** Everything the rules of a channel write need, read in one round trip before the write. */
export interface ChannelWriteContext {
  workspaceId: string;
  channel: ChannelRow;
  /** Null for a backend key acting as itself (`caller`). */
  actor: ChannelActor | null;
  /** The actor's role (null in direct channels); undefined when the actor is not a member. */
  role: MemberRole | null | undefined;
  /** The actor is muted workspace-wide (CONTRACT §5). */
  muted: boolean;
  /**
   * The actor's ban in force here (CONTRACT §19): workspace-wide or in this channel; `ban` wins over
   * `shadow` when both apply. Null when none.
   */
  ban: 'ban' | 'shadow' | null;
  message: MessageHead | null;
  /** The message the idempotency key already names. */
  replayId: string | null;
  /** A user JWT's own act on messages (OpenOptions.messageAct): a frozen channel refuses it. */
  userAct: boolean;
  /** Users who block the actor (a send's message is not delivered to them). */
  blockerIds: string[];
}

/** A message to persist through `chat_send_message`. */
export interface OutgoingMessage {
  userId: string | null;
  senderKey: string;
  type: string;
  content: string;
  attachmentUrl: string | null;
  attachment: unknown;
  parentId: string | null;
  idempotencyKey: string | null;
  mentionIds: string[];
  /** The thread's root (CONTRACT §15); null for a message of the channel itself. */
  threadId: string | null;
  /** A thread reply also shown in the channel (ignored without threadId). */
  showInChannel: boolean;
  /** CONTRACT §17's message metadata; null for none. */
  metadata: Record<string, unknown> | null;
  /** A user's own send through a JWT: the function applies frozen and slow mode under the lock. */
  byUser: boolean;
  /** The author is shadow-banned (CONTRACT §19): stored, shown to them and the backend, counted nowhere. */
  shadowed: boolean;
}

/**
 * An event of a new message. The function sets the id and the stored instant it made into the payload's
 * `message.id` and `message.created_at` (or `message_id`): build it with PENDING_MESSAGE_ID.
 */
export interface OutgoingEvent<T extends DomainEventType = DomainEventType> {
  type: T;
  payload: DomainEventMap[T];
}

/** Stands in for a new message's id in its events until chat_send_message sets the id it made. */
export const PENDING_MESSAGE_ID = '00000000-0000-7000-8000-000000000000';

export type SendOutcome =
  | Sent
  | { outcome: 'replay'; id: string }
  | { outcome: 'slow_mode'; retryAfterMs: number }
  | { outcome: 'not_member' | 'gone' | 'no_root' | 'frozen' };

/** A committed send: the message's id and stored instant (ISO), and the seq of its first event. */
export interface Sent {
  outcome: 'sent';
  id: string;
  created_at: string;
  first_seq: number;
}

/** What a send publishes live, from its committed events as stored (null: leave them to the log's publisher). */
export type LiveRender = (sent: Sent, stored: StoredEvent[]) => LiveMessage | null;

/**
 * The one way to write to a channel. `open` resolves the channel in the workspace, applies the
 * acting-user rule and checks membership, role and mute in one round trip; `write` runs a unit of work
 * in one transaction that holds the channel's order lock and hands it a ChannelWriteSession, the only
 * way to append a channel event; `send` persists a message as one server-side statement, so the lock is
 * held only while PostgreSQL executes it.
 */
@Injectable()
export class ChannelWrites {
  private readonly logger = new Logger('ChannelWrites');

  constructor(
    private readonly db: DataSource,
    private readonly events: EventLogService,
    private readonly live: LivePublish,
  ) {}

  /** The context of a write, with the actor and membership rules applied. */
  async open(p: WorkspacePrincipal, channelRef: string | null, o: OpenOptions): Promise<ChannelWriteContext> {
    const ctx = await this.read(p, channelRef, o);
    if (ctx.actor) checkRole(ctx.channel, ctx.role, o.need);
    checkFrozen(ctx, ctx.channel);
    return ctx;
  }

  /**
   * The facts without the membership rule (a send applies CONTRACT §7's order itself: membership,
   * then replay, then mute). The acting-user rule and 404s still apply.
   */
  async read(p: WorkspacePrincipal, channelRef: string | null, o: OpenOptions): Promise<ChannelWriteContext> {
    const what = o.messageId !== undefined ? 'Message' : 'Channel';
    if (o.messageId !== undefined ? !isUuid(o.messageId) : !channelRef || channelRef.length > 200)
      throw AppError.notFound(what);
    // a bad acting user is reported after a missing channel or message, as before any other rule
    let actor: { id: string } | { externalId: string } | null = null;
    let actorError: Error | null = null;
    try {
      actor = actorRef(p, o.actor);
    } catch (e) {
      actorError = e as Error;
    }
    const found: (ChannelRow & {
      a_id: string | null;
      a_external_id: string | null;
      a_name: string | null;
      a_avatar_url: string | null;
      a_member: boolean;
      a_role: MemberRole | null;
      a_muted: boolean;
      a_ban: 'ban' | 'shadow' | null;
      a_blockers: string[] | null;
      replay_id: string | null;
      h_id: string | null;
      h_user_id: string | null;
      h_type: MessageHead['type'] | null;
      h_attachment_url: string | null;
      h_deleted_at: Date | null;
      h_shadowed: boolean | null;
      h_age_seconds: number | null;
    })[] = await prepared(
      this.db.manager,
      `WITH h AS (
         SELECT msg.id, msg.channel_id, msg.user_id, msg.type, msg.attachment_url, msg.deleted_at, msg.shadowed,
                extract(epoch FROM clock_timestamp() - msg.created_at)::float8 AS age_seconds
           FROM messages msg WHERE msg.workspace_id = $1 AND msg.id = $6::uuid),
       ch AS (
         SELECT ${CHANNEL_COLUMNS} FROM channels c
          WHERE c.workspace_id = $1
            AND CASE WHEN $6::uuid IS NOT NULL THEN c.id = (SELECT h.channel_id FROM h)
                     ELSE (c.id = $2::uuid OR c.external_id = $3) END
          ORDER BY (c.id = $2::uuid) DESC NULLS LAST LIMIT 1),
       a AS (
         SELECT u.id, u.external_id, u.name, u.avatar_url FROM users u
          WHERE u.workspace_id = $1 AND (u.id = $4::uuid OR u.external_id = $5))
       SELECT ch.*, a.id AS a_id, a.external_id AS a_external_id, a.name AS a_name, a.avatar_url AS a_avatar_url,
              cm.user_id IS NOT NULL AS a_member, cm.role AS a_role,
              EXISTS (SELECT 1 FROM mutes mu WHERE mu.workspace_id = $1 AND mu.user_id = a.id
                         AND (mu.until IS NULL OR mu.until > clock_timestamp())) AS a_muted,
              (SELECT CASE WHEN bool_or(NOT bn.shadow) THEN 'ban' WHEN bool_or(bn.shadow) THEN 'shadow' END
                 FROM bans bn WHERE bn.user_id = a.id AND (bn.channel_id IS NULL OR bn.channel_id = ch.id)
                  AND (bn.expires_at IS NULL OR bn.expires_at > clock_timestamp())) AS a_ban,
              (SELECT array_agg(bl.blocker_id) FROM blocks bl WHERE bl.blocked_id = a.id) AS a_blockers,
              (SELECT msg.id FROM messages msg WHERE msg.workspace_id = $1 AND $7::text IS NOT NULL
                  AND msg.sender_key = COALESCE(a.id::text, 'system') AND msg.idempotency_key = $7::text) AS replay_id,
              h.id AS h_id, h.user_id AS h_user_id, h.type AS h_type, h.attachment_url AS h_attachment_url,
              h.deleted_at AS h_deleted_at, h.shadowed AS h_shadowed, h.age_seconds AS h_age_seconds
         FROM ch LEFT JOIN a ON true
         LEFT JOIN channel_members cm ON cm.channel_id = ch.id AND cm.user_id = a.id
         LEFT JOIN h ON true`,
      [
        p.workspaceId,
        o.messageId === undefined && channelRef && isUuid(channelRef) ? channelRef : null,
        o.messageId === undefined ? channelRef : null,
        actor && 'id' in actor ? actor.id : null,
        actor && 'externalId' in actor ? actor.externalId : null,
        o.messageId ?? null,
        o.idempotencyKey ?? null,
      ],
    );
    const r = found[0];
    if (!r || (o.messageId !== undefined && !r.h_id)) throw AppError.notFound(what);
    if (actorError) throw actorError;
    const {
      a_id,
      a_external_id,
      a_name,
      a_avatar_url,
      a_member,
      a_role,
      a_muted,
      a_ban,
      a_blockers,
      replay_id,
      h_id,
      h_user_id,
      h_type,
      h_attachment_url,
      h_deleted_at,
      h_shadowed,
      h_age_seconds,
      ...channel
    } = r;
    if (actor && !a_id) {
      // a JWT's user is always found; a backend key named an unknown user
      throw AppError.validation(
        'user_external_id',
        `unknown user ${o.actor.kind === 'acting' ? o.actor.userExternalId : ''}`,
      );
    }
    return {
      workspaceId: p.workspaceId,
      channel,
      actor: a_id ? { id: a_id, external_id: a_external_id!, name: a_name, avatar_url: a_avatar_url } : null,
      role: a_member ? a_role : undefined,
      muted: a_muted,
      ban: a_ban,
      replayId: replay_id,
      userAct: o.messageAct === true && p.kind === 'user',
      blockerIds: a_blockers ?? [],
      message: h_id
        ? {
            id: h_id,
            channel_id: channel.id,
            channel_external_id: channel.external_id,
            user_id: h_user_id,
            type: h_type!,
            attachment_url: h_attachment_url,
            deleted_at: h_deleted_at,
            shadowed: h_shadowed === true,
            age_seconds: h_age_seconds!,
          }
        : null,
    };
  }

  /**
   * Runs `work` in one transaction that first takes the channel's order lock, with the channel row as
   * it is once the lock is held (404 if it went meanwhile) and, with `need`, the actor's membership and
   * role checked again under the lock.
   */
  async write<T>(
    ctx: ChannelWriteContext,
    work: (s: ChannelWriteSession) => Promise<T>,
    o: { need?: 'member' | 'manage'; missing?: 'Channel' | 'Message' } = {},
  ): Promise<T> {
    return this.db.transaction(async (m) => {
      await orderChannelWrites(m, [ctx.channel.id]);
      const found: (ChannelRow & { a_member: boolean; a_role: MemberRole | null })[] = await m.query(
        `SELECT ${CHANNEL_COLUMNS}, cm.user_id IS NOT NULL AS a_member, cm.role AS a_role
           FROM channels c LEFT JOIN channel_members cm ON cm.channel_id = c.id AND cm.user_id = $3::uuid
          WHERE c.workspace_id = $1 AND c.id = $2`,
        [ctx.workspaceId, ctx.channel.id, ctx.actor?.id ?? null],
      );
      const r = found[0];
      if (!r) throw AppError.notFound(o.missing ?? 'Channel');
      const { a_member, a_role, ...channel } = r;
      if (ctx.actor && o.need) checkRole(channel, a_member ? a_role : undefined, o.need);
      checkFrozen(ctx, channel);
      return work(new ChannelWriteSession(m, channel, this.events));
    });
  }

  /**
   * A channel being created in the caller's transaction: takes its order lock before the row exists,
   * so its first events take seq 1, 2, … in commit order. `insert` writes the row (null: not created).
   */
  async create(
    m: EntityManager,
    channelId: string,
    insert: () => Promise<ChannelRow | null>,
  ): Promise<ChannelWriteSession | null> {
    await orderChannelWrites(m, [channelId]);
    const row = await insert();
    return row ? new ChannelWriteSession(m, row, this.events) : null;
  }

  /**
   * Takes the order locks of several channels (in id order, so two multi-channel writers never
   * deadlock) inside the caller's transaction, before its first write; one session per channel that
   * still exists.
   */
  async lock(m: EntityManager, workspaceId: string, channelIds: string[]): Promise<ChannelWriteSession[]> {
    await orderChannelWrites(m, channelIds);
    if (!channelIds.length) return [];
    const channels: ChannelRow[] = await m.query(
      `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.workspace_id = $1 AND c.id = ANY($2::uuid[]) ORDER BY c.id`,
      [workspaceId, channelIds],
    );
    return channels.map((c) => new ChannelWriteSession(m, c, this.events));
  }

  /**
   * Persists a message and its events as one statement outside any transaction: the channel lock is
   * held only for PostgreSQL's execution of it. Once it committed, `render` makes what this instance
   * publishes at once (LivePublish, in seq order with its other sends to the channel), and the log's
   * readers are nudged with the note of what was published.
   */
  async send(ctx: ChannelWriteContext, msg: OutgoingMessage, events: OutgoingEvent[], render: LiveRender = () => null): Promise<SendOutcome> {
    const channelId = ctx.channel.id;
    const ids = events.map(() => newId());
    const token = this.live.reserve(channelId);
    let out: SendOutcome;
    try {
      out = await sendMessage(this.db.manager, ctx.workspaceId, channelId, msg, events, ids);
    } catch (e) {
      this.live.release(token, channelId);
      throw e;
    }
    if (out.outcome !== 'sent' || !events.length) {
      this.live.release(token, channelId);
      return out;
    }
    let live: LiveMessage | null = null;
    try {
      live = render(out, storedEvents(ctx, out, events, ids));
    } catch (e) {
      // the message is stored: the answer stands, and the log's publisher sends it
      this.logger.warn(`rendering a committed send for its live publish: ${String(e)}`);
    }
    this.live.committed(token, channelId, out.first_seq, events.length, live);
    return out;
  }
}

/**
 * One channel's writes inside a transaction that holds its order lock. Only a session can append a
 * channel event, so every channel event takes the next `seq` in commit order.
 */
export class ChannelWriteSession {
  constructor(
    readonly m: EntityManager,
    readonly channel: ChannelRow,
    private readonly events: EventLogService,
  ) {}

  get workspaceId(): string {
    return this.channel.workspace_id;
  }

  /** Appends a channel event (the channel's next seq), committed with the transaction. */
  async append<T extends DomainEventType>(
    type: T,
    payload: DomainEventMap[T],
    audience?: string[],
  ): Promise<void> {
    await this.events.appendToChannel(this.m, {
      workspaceId: this.channel.workspace_id,
      channelId: this.channel.id,
      type,
      payload,
      audience,
    });
  }

  /** Appends several channel events in one statement, in order (the channel's next seqs). */
  async appendMany(events: OutgoingEvent[]): Promise<void> {
    await this.events.appendManyToChannel(this.m, this.channel.workspace_id, this.channel.id, events);
  }

  /** The channel row re-read within the transaction (after a change to it). */
  async reload(): Promise<ChannelRow> {
    const found: ChannelRow[] = await this.m.query(
      `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.id = $1`,
      [this.channel.id],
    );
    return found[0]!;
  }

  /** The message's row locked for the rest of the transaction, as it is now; null if it is gone. */
  async lockMessage(id: string): Promise<{ deleted_at: Date | null; thread_id: string | null } | null> {
    const found: { deleted_at: Date | null; thread_id: string | null }[] = await this.m.query(
      `SELECT deleted_at, thread_id FROM messages WHERE id = $1 AND channel_id = $2 FOR NO KEY UPDATE`,
      [id, this.channel.id],
    );
    return found[0] ?? null;
  }

  /** Persists a message and its events within this transaction (the same statement `ChannelWrites.send` runs). */
  async sendMessage(msg: OutgoingMessage, events: OutgoingEvent[]): Promise<SendOutcome> {
    const out = await sendMessage(this.m, this.channel.workspace_id, this.channel.id, msg, events, events.map(() => newId()));
    if (out.outcome === 'sent' && events.length && this.m.queryRunner) {
      // told with the commit: nobody published these live, the log's publisher does (at once)
      const data = this.m.queryRunner.data as Record<string, unknown>;
      data[HAS_EVENTS] = true;
      const notes = ((data[PUBLISH_NOTES] as PublishNote[] | undefined) ??= []);
      notes.push({ channel: this.channel.id, first: out.first_seq, count: events.length, live: false });
    }
    return out;
  }
}

/**
 * CONTRACT §3's acting-user rule: who to look up, or null for a backend key acting as itself. Also for
 * acting writes that are not channel writes (flagging a user).
 */
export function actorRef(p: WorkspacePrincipal, rule: ActorRule): { id: string } | { externalId: string } | null {
  const named = rule.kind === 'acting' ? rule.userExternalId : undefined;
  if (p.kind === 'user') {
    if (named !== undefined && named !== p.externalId)
      throw AppError.validation('user_external_id', 'is only for backend keys');
    return { id: p.userId };
  }
  if (rule.kind === 'caller') return null;
  if (!named) throw AppError.validation('user_external_id', 'is required with a workspace key');
  return { externalId: named };
}

/** SPEC.md's rule 1 and the role rules: a member (403 NOT_A_MEMBER), an admin of a group to manage (403 FORBIDDEN). */
function checkRole(
  channel: ChannelRow,
  role: MemberRole | null | undefined,
  need: 'member' | 'manage',
): void {
  if (role === undefined) throw new AppError('NOT_A_MEMBER');
  if (need === 'manage' && channel.type === 'group' && role !== 'admin')
    throw new AppError('FORBIDDEN', 'Only a channel admin can do this');
}

/**
 * CONTRACT §19: a banned user's sends, edits and reactions are 403 BANNED (whoever acts for them); a
 * shadow ban refuses nothing. Reads stay allowed, and so does unsending one's own message.
 */
export function checkBanned(ctx: Pick<ChannelWriteContext, 'ban'>): void {
  if (ctx.ban === 'ban') throw new AppError('BANNED');
}

/** CONTRACT §17: a user's send, edit, reaction or unsend in a frozen channel is 403 CHANNEL_FROZEN. */
export function checkFrozen(ctx: Pick<ChannelWriteContext, 'userAct'>, channel: ChannelRow): void {
  if (ctx.userAct && channel.frozen) throw new AppError('CHANNEL_FROZEN');
}

/**
 * A committed send's events as chat_send_message stored them: the message's id and instant set into
 * `message.id` / `message.created_at` (or `message_id`), the seqs from the first. A thread root's
 * counters (thread.updated) are only in the stored row: such a send is left to the log's publisher.
 */
function storedEvents(ctx: ChannelWriteContext, sent: Sent, events: OutgoingEvent[], ids: string[]): StoredEvent[] {
  const at = new Date(sent.created_at);
  return events.map((e, i) => {
    const p = e.payload as Record<string, unknown> & { message?: Record<string, unknown> };
    const payload =
      e.type !== 'thread.updated' && p.message
        ? { ...p, message: { ...p.message, id: sent.id, created_at: sent.created_at } }
        : 'message_id' in p
          ? { ...p, message_id: sent.id }
          : p;
    return {
      id: ids[i]!,
      position: 0,
      tx_id: '0',
      workspace_id: ctx.workspaceId,
      channel_id: ctx.channel.id,
      seq: sent.first_seq + i,
      type: e.type,
      payload,
      audience: null,
      created_at: at,
    };
  });
}

async function sendMessage(
  m: EntityManager,
  workspaceId: string,
  channelId: string,
  msg: OutgoingMessage,
  events: OutgoingEvent[],
  ids: string[],
): Promise<SendOutcome> {
  const found: {
    outcome: SendOutcome['outcome'];
    message_id: string | null;
    created_at: string | null;
    first_seq: string | null;
    retry_after_ms: string | null;
  }[] = await prepared(
    m,
    `SELECT * FROM chat_send_message($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [
      channelId,
      workspaceId,
      msg.userId,
      msg.senderKey,
      msg.type,
      msg.content,
      msg.attachmentUrl,
      msg.attachment === null ? null : JSON.stringify(msg.attachment),
      msg.parentId,
      msg.idempotencyKey,
      msg.mentionIds,
      msg.threadId,
      msg.threadId !== null && msg.showInChannel,
      msg.metadata === null ? null : JSON.stringify(msg.metadata),
      msg.byUser,
      msg.shadowed,
      ids,
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.payload)),
    ],
  );
  const r = found[0];
  if (!r) throw new Error('chat_send_message answered nothing');
  switch (r.outcome) {
    case 'sent':
      return {
        outcome: 'sent',
        id: r.message_id!,
        created_at: r.created_at!,
        first_seq: Number(r.first_seq),
      };
    case 'replay':
      if (!r.message_id) throw new Error('idempotency conflict without a row');
      return { outcome: 'replay', id: r.message_id };
    case 'slow_mode':
      return { outcome: 'slow_mode', retryAfterMs: Number(r.retry_after_ms) };
    case 'not_member':
    case 'gone':
    case 'no_root':
    case 'frozen':
      return { outcome: r.outcome };
  }
}
