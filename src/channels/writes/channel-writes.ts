import type { MessageType } from '../../contract/events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../../common/auth/principal';
import { AppError } from '../../common/errors/app-error';
import { isUuid, newId } from '../../common/ids';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { orderChannelWrites } from '../../events/channel-order';
import { EventLogService } from '../../events/event-log.service';
import { LiveMessage, LivePublish, ROOM_MOVE_GRACE_MS } from '../../events/live-publish';
import { prepared } from '../../infra/database/prepared';
import type { MemberRole } from '../channel-members.repository';
import { CHANNEL_COLUMNS, ChannelRow } from '../channels.repository';
import { ChannelWriteSession } from './channel-write-session';
import { SendBatcher } from './send-batcher';
import { LiveRender, OutgoingEvent, OutgoingMessage, SendOutcome, storedEvents } from './send-statement';
import { ChannelWriteKind, enforce, WRITE_POLICIES, WriteFacts, WriteWindows } from './write-policy';

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
  type: MessageType;
  attachment_url: string | null;
  deleted_at: Date | null;
  /** Sent while its author was shadow-banned (CONTRACT §19): nobody but the author and the backend sees it. */
  shadowed: boolean;
  /** Seconds since it was sent, by the database's clock (windows are measured there). */
  age_seconds: number;
}

/** What a write is about, besides its channel. */
export interface WriteTarget {
  /** The message the write is about: the channel is the message's (404 `Message` outside the workspace). */
  messageId?: string;
  /** The user a backend key acts for (`user_external_id`), for an `acting` write. */
  userExternalId?: string;
  /** A send's idempotency key: the context says which message it already names. */
  idempotencyKey?: string;
}

/** Everything the rules of a channel write need, read in one round trip before the write. */
export interface ChannelWriteContext {
  /** The kind of write: its policy is WRITE_POLICIES[kind]. */
  kind: ChannelWriteKind;
  principal: WorkspacePrincipal['kind'];
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
  /** Users who block the actor (a send's message is not delivered to them). */
  blockerIds: string[];
  /**
   * The channel's members changed within ROOM_MOVE_GRACE_MS: a send is left to the log's publisher,
   * which moves the members' sockets between rooms before it publishes what follows.
   */
  membersMoving: boolean;
}

/**
 * The one way to write to a channel. `open` reads the facts of a kind of write in one round trip (the
 * channel in the workspace, the actor by CONTRACT §3's acting-user rule, membership, role, mute, ban,
 * the message, the replay) and applies the kind's policy with `enforce`; `write` runs a unit of work in
 * one transaction that holds the channel's order lock, reads the facts that can change again under it
 * and applies the same policy, then hands it a ChannelWriteSession, the only way to append a channel
 * event; `send` persists a message as one server-side statement (with the sends that arrive meanwhile:
 * SendBatcher), so the lock is held only while PostgreSQL executes it.
 */
@Injectable()
export class ChannelWrites {
  private readonly logger = new Logger('ChannelWrites');

  constructor(
    private readonly db: DataSource,
    private readonly events: EventLogService,
    private readonly live: LivePublish,
    private readonly batcher: SendBatcher,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.windows = { edit: config.SERVICE_EDIT_WINDOW_SECONDS, unsend: config.SERVICE_UNSEND_WINDOW_SECONDS };
  }

  private readonly windows: WriteWindows;

  /** The context of a write of this kind, its policy applied. */
  async open(
    p: WorkspacePrincipal,
    channelRef: string | null,
    kind: ChannelWriteKind,
    o: WriteTarget = {},
  ): Promise<ChannelWriteContext> {
    const ctx = await this.read(p, channelRef, kind, o);
    this.enforce(ctx);
    return ctx;
  }

  /**
   * The kind's policy on the context (`enforce`): throws its error, or answers `replay` when a send's
   * idempotency key named an earlier message. For a caller with a step of its own before the rules.
   */
  enforce(ctx: ChannelWriteContext): 'go' | 'replay' {
    return enforce(WRITE_POLICIES[ctx.kind], factsOf(ctx), this.windows);
  }

  /** The facts of a write, its policy not yet applied. The acting-user rule and 404s apply. */
  async read(
    p: WorkspacePrincipal,
    channelRef: string | null,
    kind: ChannelWriteKind,
    o: WriteTarget = {},
  ): Promise<ChannelWriteContext> {
    const what = o.messageId !== undefined ? 'Message' : 'Channel';
    const rule = WRITE_POLICIES[kind].actor;
    if (o.messageId !== undefined ? !isUuid(o.messageId) : !channelRef || channelRef.length > 200)
      throw AppError.notFound(what);
    // a bad acting user is reported after a missing channel or message, as before any other rule
    let actor: { id: string } | { externalId: string } | null = null;
    let actorError: Error | null = null;
    try {
      actor = actorRef(
        p,
        rule === 'acting' ? { kind: 'acting', userExternalId: o.userExternalId } : { kind: 'caller' },
      );
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
      members_moving: boolean;
    })[] = await prepared(
      this.db.manager,
      `WITH h AS (
         SELECT msg.id, msg.channel_id, msg.user_id, msg.type, msg.attachment_url, msg.deleted_at, msg.shadowed,
                extract(epoch FROM clock_timestamp() - msg.created_at)::float8 AS age_seconds
           FROM messages msg WHERE msg.workspace_id = $1 AND msg.id = $6::uuid),
       ch AS (
         SELECT ${CHANNEL_COLUMNS},
                c.members_changed_at > clock_timestamp() - make_interval(secs => $8::float8 / 1000) AS members_moving
           FROM channels c
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
        ROOM_MOVE_GRACE_MS,
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
      members_moving,
      ...channel
    } = r;
    if (actor && !a_id) {
      // a JWT's user is always found; a backend key named an unknown user
      throw AppError.validation('user_external_id', `unknown user ${o.userExternalId ?? ''}`);
    }
    return {
      kind,
      principal: p.kind,
      workspaceId: p.workspaceId,
      channel,
      actor: a_id ? { id: a_id, external_id: a_external_id!, name: a_name, avatar_url: a_avatar_url } : null,
      role: a_member ? a_role : undefined,
      muted: a_muted,
      ban: a_ban,
      replayId: replay_id,
      blockerIds: a_blockers ?? [],
      membersMoving: members_moving,
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
   * Runs `work` in one transaction that first takes the channel's order lock. Under it, the facts that
   * can change meanwhile are read again (the channel row, the actor's membership and role, and the
   * message, locked for the rest of the transaction) and the kind's policy applied to them by the same
   * `enforce`; 404 if the channel or the message went.
   */
  async write<T>(ctx: ChannelWriteContext, work: (s: ChannelWriteSession) => Promise<T>): Promise<T> {
    return this.db.transaction(async (m) => {
      await orderChannelWrites(m, [ctx.channel.id]);
      const found: (ChannelRow & {
        a_member: boolean;
        a_role: MemberRole | null;
        h_found: boolean;
        h_deleted_at: Date | null;
      })[] = await m.query(
        `WITH h AS (SELECT msg.deleted_at FROM messages msg WHERE msg.id = $4::uuid AND msg.channel_id = $2
                     FOR NO KEY UPDATE)
         SELECT ${CHANNEL_COLUMNS}, cm.user_id IS NOT NULL AS a_member, cm.role AS a_role,
                EXISTS (SELECT 1 FROM h) AS h_found, (SELECT h.deleted_at FROM h) AS h_deleted_at
           FROM channels c LEFT JOIN channel_members cm ON cm.channel_id = c.id AND cm.user_id = $3::uuid
          WHERE c.workspace_id = $1 AND c.id = $2`,
        [ctx.workspaceId, ctx.channel.id, ctx.actor?.id ?? null, ctx.message?.id ?? null],
      );
      const r = found[0];
      if (!r || (ctx.message && !r.h_found)) throw AppError.notFound(ctx.message ? 'Message' : 'Channel');
      const { a_member, a_role, h_found: _found, h_deleted_at, ...channel } = r;
      this.enforce({
        ...ctx,
        channel,
        role: a_member ? a_role : undefined,
        replayId: null,
        message: ctx.message && { ...ctx.message, deleted_at: h_deleted_at },
      });
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
  async send(
    ctx: ChannelWriteContext,
    msg: OutgoingMessage,
    events: OutgoingEvent[],
    render: LiveRender = () => null,
  ): Promise<SendOutcome> {
    const channelId = ctx.channel.id;
    const ids = events.map(() => newId());
    const token = this.live.reserve(channelId);
    let out: SendOutcome;
    try {
      out = await this.batcher.send({ workspaceId: ctx.workspaceId, channelId, msg, events, ids });
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
      if (!ctx.membersMoving)
        live = render(out, storedEvents({ workspaceId: ctx.workspaceId, channelId }, out, events, ids));
    } catch (e) {
      // the message is stored: the answer stands, and the log's publisher sends it
      this.logger.warn(`rendering a committed send for its live publish: ${String(e)}`);
    }
    this.live.committed(token, channelId, out.first_seq, events.length, live);
    return out;
  }
}

/** Who a write is done as: WritePolicy's `actor`, with the user a backend key names for an `acting` write. */
export type ActorRule = { kind: 'acting'; userExternalId: string | undefined } | { kind: 'caller' };

/**
 * CONTRACT §3's acting-user rule: who to look up, or null for a backend key acting as itself. Also for
 * acting writes that are not channel writes (flagging a user).
 */
export function actorRef(
  p: WorkspacePrincipal,
  rule: ActorRule,
): { id: string } | { externalId: string } | null {
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

/** The facts `enforce` decides on, from a context. */
function factsOf(ctx: ChannelWriteContext): WriteFacts {
  return {
    principal: ctx.principal,
    actorId: ctx.actor?.id ?? null,
    channel: ctx.channel,
    role: ctx.role,
    ban: ctx.ban,
    muted: ctx.muted,
    replay: ctx.replayId !== null,
    message: ctx.message,
  };
}
