import { Injectable } from '@nestjs/common';
import { largeChannelSql } from '../workspaces/workspace-settings';
import { EntityManager } from 'typeorm';
import { isoNotNull } from '../common/time';
import { isoTime } from '../infra/database/sql';
import { prepared } from '../infra/database/prepared';
import type {
  AttachmentView,
  DomainEventMap,
  LinkPreview,
  MentionRef,
  MessageType,
  MessageUserView,
  MessageView,
  PollView,
  QuotedMessagePayload,
  ReactionView,
  ReceiptStatus,
  ThreadCounters,
  ThreadReadState,
  UserRef,
} from '../contract/events';
import { threadReadAt, unreadRepliesSql } from './thread-state.sql';

export interface MessageViewer {
  workspaceId: string;
  /** The user who looks (reacted_by_me); null for a backend key. */
  userId: string | null;
  /**
   * A realtime envelope, live or in sync: it carries no viewer's thread read state (CONTRACT §23) nor a
   * poll's my_votes (§28).
   */
  broadcast?: true;
}

const NO_THREAD_STATE = `LEFT JOIN LATERAL (SELECT NULL::boolean AS participant, NULL::int AS unread_replies, NULL::text AS last_read_at) ts ON true`;

/**
 * A thread's participant ids (a uuid[] column) as `[{id, external_id, name}]` in their order, or null.
 * A user being erased (no external id, CONTRACT §20) is no longer a participant.
 */
export function threadParticipantsJson(ids: string): string {
  return `(SELECT json_agg(json_build_object('id', tu.id, 'external_id', tu.external_id, 'name', tu.name) ORDER BY x.ord)
             FROM unnest(${ids}) WITH ORDINALITY AS x(id, ord) JOIN users tu ON tu.id = x.id AND tu.external_id IS NOT NULL)`;
}

/**
 * CONTRACT §28: message `msg`'s poll and `my_votes`, the option ids `viewer` (a uuid expression; null:
 * none) chose, as one json `{poll, my_votes}`; null for any other type of message. The CASE runs the
 * lookup for poll messages only: a page without polls costs one comparison per message.
 */
function pollSql(msg: string, viewer: string): string {
  return `CASE WHEN ${msg}.type = 'poll' THEN (SELECT json_build_object('poll', json_build_object(
            'id', p.id, 'question', p.question,
            'options', (SELECT json_agg(json_build_object('id', o.id, 'text', o.text, 'vote_count', o.vote_count) ORDER BY o.position)
                          FROM poll_options o WHERE o.poll_id = p.id),
            'total_votes', p.total_votes, 'voter_count', p.voter_count,
            'multiple_choice', p.multiple_choice, 'anonymous', p.anonymous,
            'closes_at', ${isoTime('p.closes_at')},
            -- closed once closes_at passed, before the scheduler's pass records it (votes are refused from then on)
            'closed', p.closed_at IS NOT NULL OR coalesce(p.closes_at <= statement_timestamp(), false),
            'closed_at', ${isoTime('coalesce(p.closed_at, CASE WHEN p.closes_at <= statement_timestamp() THEN p.closes_at END)')},
            'created_by', (SELECT json_build_object('id', cu.id, 'external_id', cu.external_id, 'name', cu.name)
                             FROM users cu WHERE cu.id = p.created_by AND cu.external_id IS NOT NULL)),
          'my_votes', (SELECT coalesce(json_agg(v.option_id ORDER BY o.position), '[]'::json)
                         FROM poll_votes v JOIN poll_options o ON o.id = v.option_id
                        WHERE v.poll_id = p.id AND v.user_id = ${viewer}))
     FROM polls p WHERE p.message_id = ${msg}.id) END`;
}

/** CONTRACT §7: the quote carries the first 180 Unicode code points of the parent's content. */
export const QUOTE_MAX_CODE_POINTS = 180;

interface MessageRow {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  u_id: string | null;
  u_external_id: string | null;
  u_name: string | null;
  u_avatar_url: string | null;
  content: string;
  type: MessageType;
  attachment_url: string | null;
  attachment: AttachmentView | null;
  metadata: Record<string, unknown> | null;
  /** null: none (the common case, left unparsed). */
  previews: LinkPreview[] | null;
  parent_id: string | null;
  /** Times as the API shows them (isoTime). */
  created_at: string;
  edited_at: string | null;
  deleted_at: string | null;
  p_id: string | null;
  p_user_id: string | null;
  p_user_name: string | null;
  p_content: string | null;
  p_type: string | null;
  p_deleted: boolean | null;
  thread_id: string | null;
  show_in_channel: boolean | null;
  shadowed: boolean;
  reply_count: number | null;
  last_reply_at: string | null;
  thread_participants: UserRef[] | null;
  pinned_at: string | null;
  pb_id: string | null;
  pb_external_id: string | null;
  pb_name: string | null;
  /** The root's last reply ordinal (0 or null: nobody ever replied). */
  t_reply_no: string | null;
  /** The viewer's cursor in the thread (CONTRACT §23), when they have one. */
  ts_participant: boolean | null;
  ts_unread: number | null;
  ts_last_read_at: string | null;
}

/** A set of messages to render: a CTE body yielding `id` and `ord` (the answer's order), with its parameters. */
export interface MessageSource {
  /** SQL selecting (id, ord[, created_key]); its parameters are numbered from $3 on. */
  sql: string;
  params: unknown[];
}

/**
 * Adds a source's parameter (numbered after the rendering statement's $1 and $2) and answers it as an
 * InitPlan, `(SELECT $n::type)`, which the planner cannot estimate by. The rendering statement is
 * prepared, and PostgreSQL plans its first five executions with the values (custom plans), then keeps
 * the generic plan only if that is estimated no dearer: with the channel's id visible, a custom plan of
 * a page in a large channel (a most common value) is estimated cheaper than the generic one, so every
 * page was planned again (2–3.5 ms of planning for 1.5 ms of execution on a 1M-message channel). Hidden,
 * both estimates are the same and the generic plan is kept; the index conditions still use the value.
 */
export function sourceParam(params: unknown[], value: unknown, type: 'uuid' | 'timestamptz'): string {
  return `(SELECT $${params.push(value) + 2}::${type})`;
}

interface RenderedRow extends MessageRow {
  created_key: string | null;
  poll: { poll: PollView; my_votes: string[] } | null;
  mentions: MentionRef[] | null;
  reactions: ReactionView[] | null;
  receipt_status: ReceiptStatus;
}

/**
 * A channel's two members furthest behind on a cursor (`last_delivered_at` or `last_read_at`), as
 * arrays ordered from the furthest behind, for a lateral join on channels `c`.
 */
function furthestBehind(cursor: 'last_delivered_at' | 'last_read_at'): string {
  return `SELECT array_agg(cm.user_id ORDER BY cm.at) AS users, array_agg(cm.at ORDER BY cm.at) AS ats
            FROM (SELECT cm.user_id, cm.${cursor} AS at FROM channel_members cm
                   WHERE cm.channel_id = c.id ORDER BY cm.${cursor} LIMIT 2) cm`;
}

/**
 * Renders messages as CONTRACT §7's object for one viewer in one statement whatever the page size:
 * quoted parents, mentions, reactions and receipt state are joined or aggregated in the same query.
 * Quotes, reactions and receipts are resolved at read time, so an edited or unsent parent shows its
 * current state on every fetch. Users are joined only while they have an external id: a user being
 * erased (CONTRACT §20) keeps an anonymous row until the erasure's last batch, and is shown as no user
 * (author, quoted author, mention, thread participant) from the start.
 */
@Injectable()
export class MessageViews {
  /** The messages with these ids, in the same order; ids that are not in the workspace are left out. */
  async render(m: EntityManager, viewer: MessageViewer, messageIds: string[]): Promise<MessageView[]> {
    const ids = [...new Set(messageIds)];
    if (!ids.length) return [];
    const rows = await this.rows(m, viewer, {
      sql: `SELECT x.id, x.ord, NULL::text AS created_key FROM unnest($3::uuid[]) WITH ORDINALITY AS x(id, ord)`,
      params: [ids],
    });
    return rows.map((r) => r.view);
  }

  /** The messages a source selects (a history page), with each one's exact sort key for cursors. */
  async rows(
    m: EntityManager,
    viewer: MessageViewer,
    source: MessageSource,
  ): Promise<{ view: MessageView; created_key: string | null }[]> {
    // Everything is decided in SQL, where timestamps keep their microseconds, and times come as the
    // API's text: Node only shapes rows. `chs` is materialized (inlined, the planner re-ran it for every
    // row): per channel, the two members furthest behind on each cursor, for "every other member is at
    // or past the message" is "the furthest-behind member other than the author is", whoever the author
    // is. Reactions and mentions are aggregated for the page at once (a subquery per message cost more
    // than the rest of the statement).
    const threads = viewer.userId !== null && !viewer.broadcast;
    const rows = await prepared<RenderedRow>(
      m,
      `WITH src AS (${source.sql}),
       msg AS (
         SELECT msg.id, msg.workspace_id, msg.channel_id, msg.user_id, msg.content, msg.type, msg.attachment_url,
                msg.attachment, msg.metadata, msg.previews, msg.parent_id, msg.created_at, msg.edited_at, msg.deleted_at, msg.thread_id,
                msg.show_in_channel, msg.shadowed, src.ord, src.created_key
           FROM src JOIN messages msg ON msg.id = src.id WHERE msg.workspace_id = $1),
       chs AS MATERIALIZED (
         SELECT c.id, c.external_id,
                -- a large channel's read state is not a signal (CONTRACT §29): sent or delivered only
                NOT ${largeChannelSql('c', 'w.settings')}
                  AND (w.settings->'read_receipts_enabled') IS DISTINCT FROM 'false'::jsonb AS receipts,
                d.users AS d_users, d.ats AS d_ats, r.users AS r_users, r.ats AS r_ats
           FROM (SELECT DISTINCT channel_id FROM msg) x
           JOIN channels c ON c.id = x.channel_id
           JOIN workspaces w ON w.id = $1
           CROSS JOIN LATERAL (${furthestBehind('last_delivered_at')}) d
           CROSS JOIN LATERAL (${furthestBehind('last_read_at')}) r),
       rx AS (
         SELECT r.message_id, json_agg(json_build_object('emoji', r.emoji, 'count', r.count, 'reacted_by_me', r.mine)
                                       ORDER BY r.first_at, r.emoji) AS reactions
           FROM (SELECT rx.message_id, rx.emoji, count(*)::int AS count, COALESCE(bool_or(rx.user_id = $2::uuid), false) AS mine,
                        min(rx.created_at) AS first_at
                   FROM reactions rx WHERE rx.message_id IN (SELECT id FROM src) GROUP BY rx.message_id, rx.emoji) r
          GROUP BY r.message_id),
       mx AS (
         SELECT mm.message_id, json_agg(json_build_object('user_id', mm.user_id, 'external_id', mu.external_id, 'name', mu.name)
                                        ORDER BY mm.position) AS mentions
           FROM message_mentions mm JOIN users mu ON mu.id = mm.user_id AND mu.external_id IS NOT NULL
          WHERE mm.message_id IN (SELECT id FROM src)
          GROUP BY mm.message_id)
       SELECT msg.id, msg.channel_id, c.external_id AS channel_external_id, msg.user_id,
              u.id AS u_id, u.external_id AS u_external_id, u.name AS u_name, u.avatar_url AS u_avatar_url,
              msg.content, msg.type, msg.attachment_url, msg.attachment, msg.metadata,
              NULLIF(msg.previews, '[]'::jsonb) AS previews, msg.parent_id,
              ${isoTime('msg.created_at')} AS created_at, ${isoTime('msg.edited_at')} AS edited_at,
              ${isoTime('msg.deleted_at')} AS deleted_at, msg.created_key, msg.thread_id, msg.show_in_channel, msg.shadowed,
              t.reply_count, ${isoTime('t.last_reply_at')} AS last_reply_at, t.reply_no AS t_reply_no,
              ts.participant AS ts_participant, ts.unread_replies AS ts_unread, ts.last_read_at AS ts_last_read_at,
              CASE WHEN t.participants IS NOT NULL THEN ${threadParticipantsJson('t.participants')} END AS thread_participants,
              p.id AS p_id, pu.id AS p_user_id, pu.name AS p_user_name,
              left(p.content, ${QUOTE_MAX_CODE_POINTS}) AS p_content, p.type AS p_type, p.deleted_at IS NOT NULL AS p_deleted,
              ${isoTime('pin.pinned_at')} AS pinned_at, pb.id AS pb_id, pb.external_id AS pb_external_id, pb.name AS pb_name,
              CASE WHEN msg.deleted_at IS NULL THEN mx.mentions END AS mentions,
              rx.reactions, ${pollSql('msg', '$2::uuid')} AS poll,
              -- the furthest-behind member other than the author decides (nobody else: sent)
              CASE WHEN b.delivered IS NULL THEN 'sent'
                   WHEN c.receipts AND b.read >= msg.created_at THEN 'read'
                   WHEN b.delivered >= msg.created_at THEN 'delivered'
                   ELSE 'sent' END AS receipt_status
         FROM msg
         JOIN chs c ON c.id = msg.channel_id
         CROSS JOIN LATERAL (
           SELECT CASE WHEN c.d_users[1] IS DISTINCT FROM msg.user_id THEN c.d_ats[1] ELSE c.d_ats[2] END AS delivered,
                  CASE WHEN c.r_users[1] IS DISTINCT FROM msg.user_id THEN c.r_ats[1] ELSE c.r_ats[2] END AS read) b
         LEFT JOIN users u ON u.id = msg.user_id AND u.external_id IS NOT NULL
         LEFT JOIN messages p ON p.id = msg.parent_id AND p.workspace_id = msg.workspace_id
         LEFT JOIN users pu ON pu.id = p.user_id AND pu.external_id IS NOT NULL
         LEFT JOIN message_pins pin ON pin.message_id = msg.id
         LEFT JOIN users pb ON pb.id = pin.pinned_by
         LEFT JOIN message_threads t ON t.root_id = msg.id
         ${
           threads
             ? // the viewer's thread cursor: probed only for roots with a counters row (a reply, or a thread read; a one-time filter per row)
               `LEFT JOIN LATERAL (
                  SELECT tr.participant, ${unreadRepliesSql('tr', '$2::uuid')} AS unread_replies, ${isoTime(threadReadAt('tr'))} AS last_read_at
                    FROM thread_reads tr WHERE t.root_id IS NOT NULL AND tr.root_id = msg.id AND tr.user_id = $2::uuid) ts ON true`
             : NO_THREAD_STATE
         }
         LEFT JOIN rx ON rx.message_id = msg.id
         LEFT JOIN mx ON mx.message_id = msg.id
        ORDER BY msg.ord`,
      [viewer.workspaceId, viewer.userId, ...source.params],
    );
    return rows.map((r) => ({
      view: viewOf(r, viewer.userId, threads, !viewer.broadcast),
      created_key: r.created_key,
    }));
  }

  /** One message; null when it is not in the workspace. */
  async renderOne(m: EntityManager, viewer: MessageViewer, messageId: string): Promise<MessageView | null> {
    return (await this.render(m, viewer, [messageId]))[0] ?? null;
  }
}

/**
 * `viewer` null: rendered for no user (a backend key, or realtime before it picks the sockets);
 * `answer`: for a caller (a poll's my_votes), not a broadcast.
 */
function viewOf(r: RenderedRow, viewer: string | null, threads: boolean, answer: boolean): MessageView {
  const unseen = viewer === null;
  const deleted = r.deleted_at !== null;
  // an unsent message keeps its place in history but says nothing about what it said
  const mentioned = deleted ? [] : (r.mentions ?? []);
  return {
    id: r.id,
    channel_id: r.channel_id,
    channel_external_id: r.channel_external_id,
    // an author being erased (CONTRACT §20) is shown as no author already, as once the erasure is done
    user_id: r.u_id,
    user: r.u_id
      ? { id: r.u_id, external_id: r.u_external_id!, name: r.u_name, avatar_url: r.u_avatar_url }
      : null,
    content: deleted ? '' : r.content,
    type: r.type,
    attachment_url: deleted ? null : r.attachment_url,
    attachment: deleted ? null : r.attachment,
    metadata: deleted ? {} : (r.metadata ?? {}),
    ...(r.parent_id && r.p_id
      ? {
          parent_id: r.parent_id,
          quoted_message: {
            id: r.p_id,
            user_id: r.p_user_id,
            user_name: r.p_user_name,
            content: r.p_deleted ? '' : (r.p_content ?? ''),
            type: r.p_type ?? 'text',
            deleted: r.p_deleted === true,
          },
        }
      : {}),
    ...(mentioned.length
      ? { mentions: mentioned.map((x) => ({ user_id: x.user_id, external_id: x.external_id, name: x.name })) }
      : {}),
    ...threadFields(
      r.thread_id,
      r.show_in_channel === true,
      r.thread_id
        ? null
        : {
            reply_count: r.reply_count ?? 0,
            last_reply_at: r.last_reply_at,
            thread_participants: (r.thread_participants ?? []).map((u) => ({
              id: u.id,
              external_id: u.external_id,
              name: u.name,
            })),
          },
    ),
    ...(threads && viewer !== null && !r.thread_id ? { thread: threadStateOf(r, viewer, mentioned) } : {}),
    reactions: (r.reactions ?? []).map((x) => ({
      emoji: x.emoji,
      count: x.count,
      reacted_by_me: x.reacted_by_me,
    })),
    previews: deleted ? [] : (r.previews ?? []),
    ...(r.type === 'poll'
      ? {
          poll:
            deleted || !r.poll ? null : answer ? { ...r.poll.poll, my_votes: r.poll.my_votes } : r.poll.poll,
        }
      : {}),
    pinned_at: r.pinned_at,
    pinned_by: r.pb_id ? { id: r.pb_id, external_id: r.pb_external_id!, name: r.pb_name } : null,
    ...(r.shadowed && unseen ? { shadowed: true as const } : {}),
    // with read receipts off there are no read ticks in either direction (SPEC.md, Realtime)
    receipt_status: r.receipt_status,
    created_at: r.created_at,
    edited_at: r.edited_at,
    deleted_at: r.deleted_at,
  };
}

/**
 * The viewer's read state of a root (CONTRACT §23). A cursor row answers it. Without one: a root nobody
 * replied to yet makes its author (cursor at the root) and the users it mentions (just before it)
 * participants, as its first reply will record; once it has had replies, no row means no part in it.
 */
function threadStateOf(r: RenderedRow, viewer: string, mentioned: MentionRef[]): ThreadReadState {
  if (r.ts_participant !== null)
    return {
      participant: r.ts_participant,
      unread_replies: r.ts_unread ?? 0,
      last_read_at: r.ts_last_read_at,
    };
  if (Number(r.t_reply_no ?? 0) === 0) {
    if (r.user_id === viewer) return { participant: true, unread_replies: 0, last_read_at: r.created_at };
    if (mentioned.some((x) => x.user_id === viewer))
      return { participant: true, unread_replies: 0, last_read_at: lessOneMs(r.created_at) };
  }
  return NOT_IN_THREAD;
}

const NOT_IN_THREAD: ThreadReadState = { participant: false, unread_replies: 0, last_read_at: null };

/** The author's own new message, as its send answers it to them. */
export function ownThreadState(createdAt: string): ThreadReadState {
  return { participant: true, unread_replies: 0, last_read_at: createdAt };
}

function lessOneMs(iso: string): string {
  return new Date(Date.parse(iso) - 1).toISOString();
}

/** Stands for a new message's instant in what is built before its send stored it (the send sets the real one). */
export const PENDING_TIME = new Date(0);

/** What a send holds once its row is inserted: enough to answer without reading the message back. */
export interface FreshMessage {
  id: string;
  channel: { id: string; external_id: string };
  user: MessageUserView | null;
  content: string;
  type: MessageType;
  attachment_url: string | null;
  attachment: AttachmentView | null;
  parent_id: string | null;
  quoted_message: QuotedMessagePayload | null;
  mentions: MentionRef[];
  thread_id: string | null;
  show_in_channel: boolean;
  metadata: Record<string, unknown>;
  created_at: Date;
}

/**
 * The view of a message the caller has just inserted, as `render` would answer it at that instant:
 * no reactions yet, not pinned, and `sent` (every other member's cursors were set at an earlier
 * database clock reading than the message's created_at). Saves the send path reading back what it
 * just wrote.
 */
export function freshView(f: FreshMessage): MessageView {
  return {
    id: f.id,
    channel_id: f.channel.id,
    channel_external_id: f.channel.external_id,
    user_id: f.user?.id ?? null,
    user: f.user,
    content: f.content,
    type: f.type,
    attachment_url: f.attachment_url,
    attachment: f.attachment,
    metadata: f.metadata,
    ...(f.parent_id && f.quoted_message ? { parent_id: f.parent_id, quoted_message: f.quoted_message } : {}),
    ...(f.mentions.length
      ? {
          mentions: f.mentions.map((x) => ({ user_id: x.user_id, external_id: x.external_id, name: x.name })),
        }
      : {}),
    ...threadFields(f.thread_id, f.show_in_channel, NO_REPLIES),
    reactions: [],
    previews: [],
    pinned_at: null,
    pinned_by: null,
    receipt_status: 'sent',
    created_at: isoNotNull(f.created_at),
    edited_at: null,
    deleted_at: null,
  };
}

const NO_REPLIES: ThreadCounters = { reply_count: 0, last_reply_at: null, thread_participants: [] };

/** A reply's thread fields, or a (possible) root's counters: CONTRACT §15. */
function threadFields(
  threadId: string | null,
  showInChannel: boolean,
  counters: ThreadCounters | null,
): Pick<
  MessageView,
  'thread_id' | 'show_in_channel' | 'reply_count' | 'last_reply_at' | 'thread_participants'
> {
  if (threadId) return { thread_id: threadId, show_in_channel: showInChannel };
  return { ...(counters ?? NO_REPLIES) };
}

/** A message's author as events name users. */
export function userRef(v: MessageView): UserRef | null {
  return v.user ? { id: v.user.id, external_id: v.user.external_id, name: v.user.name } : null;
}

/** SPEC.md's `message.created` data: parent_id/quoted_message only on replies, mentions only when there are some. */
export function createdPayload(v: MessageView): DomainEventMap['message.created'] {
  return {
    message: {
      id: v.id,
      channel_id: v.channel_id,
      channel_external_id: v.channel_external_id,
      user: userRef(v),
      content: v.content,
      type: v.type,
      attachment_url: v.attachment_url,
      created_at: v.created_at,
      metadata: v.metadata,
      ...(v.parent_id && v.quoted_message
        ? { parent_id: v.parent_id, quoted_message: v.quoted_message }
        : {}),
      ...(v.mentions?.length ? { mentions: v.mentions } : {}),
      ...(v.thread_id ? { thread_id: v.thread_id, show_in_channel: v.show_in_channel === true } : {}),
      previews: v.previews,
      ...(v.poll ? { poll: broadcastPoll(v.poll) } : {}),
    },
  };
}

/** A poll as broadcasts and webhooks show it: nobody's my_votes. */
export function broadcastPoll(poll: PollView): PollView {
  const { my_votes: _, ...rest } = poll;
  return rest;
}
