import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { isoNotNull, iso } from '../common/time';
import type { MentionRef, QuotedMessagePayload } from '../events/event-types';

/** CONTRACT §9: what a presign recorded about an uploaded file. */
export interface AttachmentView {
  url: string;
  mime_type: string;
  size_bytes: number;
  filename: string;
}

export interface MessageUserView {
  id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
}

export interface ReactionView {
  emoji: string;
  count: number;
  reacted_by_me: boolean;
}

export type MessageType = 'text' | 'image' | 'file' | 'system';
export type ReceiptStatus = 'sent' | 'delivered' | 'read';

/** The message object of CONTRACT §7, as one viewer sees it. */
export interface MessageView {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  user: MessageUserView | null;
  content: string;
  type: MessageType;
  attachment_url: string | null;
  attachment: AttachmentView | null;
  parent_id?: string;
  quoted_message?: QuotedMessagePayload;
  mentions?: MentionRef[];
  reactions: ReactionView[];
  receipt_status: ReceiptStatus;
  created_at: string;
  edited_at: string | null;
  deleted_at: string | null;
}

export interface MessageViewer {
  workspaceId: string;
  /** The user who looks (reacted_by_me); null for a backend key. */
  userId: string | null;
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
  parent_id: string | null;
  created_at: Date;
  created_us: string;
  edited_at: Date | null;
  deleted_at: Date | null;
  p_id: string | null;
  p_user_id: string | null;
  p_user_name: string | null;
  p_content: string | null;
  p_type: string | null;
  p_deleted_at: Date | null;
}

interface CursorRow {
  channel_id: string;
  kind: 'd' | 'r';
  user_id: string;
  at_us: string;
}

/**
 * Renders messages as CONTRACT §7's object for one viewer, in a fixed number of queries whatever the
 * page size: quoted parents, mentions, reactions and receipt state are each one batched query.
 * Quotes, reactions and receipts are resolved at read time, so an edited or unsent parent shows its
 * current state on every fetch.
 */
@Injectable()
export class MessageViews {
  /** The messages with these ids, in the same order; ids that are not in the workspace are left out. */
  async render(m: EntityManager, viewer: MessageViewer, messageIds: string[]): Promise<MessageView[]> {
    const ids = [...new Set(messageIds)];
    if (!ids.length) return [];
    // timestamps are compared in microseconds (created_us, at_us): JavaScript dates would cut them to ms
    const rows: MessageRow[] = await m.query(
      `SELECT msg.id, msg.channel_id, c.external_id AS channel_external_id, msg.user_id,
              u.id AS u_id, u.external_id AS u_external_id, u.name AS u_name, u.avatar_url AS u_avatar_url,
              msg.content, msg.type, msg.attachment_url, msg.attachment, msg.parent_id,
              msg.created_at, (extract(epoch FROM msg.created_at) * 1000000)::bigint::text AS created_us,
              msg.edited_at, msg.deleted_at,
              p.id AS p_id, p.user_id AS p_user_id, pu.name AS p_user_name,
              left(p.content, ${QUOTE_MAX_CODE_POINTS}) AS p_content, p.type AS p_type, p.deleted_at AS p_deleted_at
         FROM messages msg
         JOIN channels c ON c.id = msg.channel_id
         LEFT JOIN users u ON u.id = msg.user_id
         LEFT JOIN messages p ON p.id = msg.parent_id AND p.workspace_id = msg.workspace_id
         LEFT JOIN users pu ON pu.id = p.user_id
        WHERE msg.workspace_id = $1 AND msg.id = ANY($2::uuid[])`,
      [viewer.workspaceId, ids],
    );
    if (!rows.length) return [];
    const found = rows.map((r) => r.id);
    const channelIds = [...new Set(rows.map((r) => r.channel_id))];

    // one after another: inside a transaction they share one connection, which runs one query at a time
    const mentions = await m.query<(MentionRef & { message_id: string })[]>(
      `SELECT mm.message_id, mm.user_id, u.external_id, u.name
           FROM message_mentions mm JOIN users u ON u.id = mm.user_id
          WHERE mm.message_id = ANY($1::uuid[])
          ORDER BY mm.message_id, mm.position`,
      [found],
    );
    const reactions = await m.query<(ReactionView & { message_id: string })[]>(
      `SELECT message_id, emoji, count(*)::int AS count,
                COALESCE(bool_or(user_id = $2::uuid), false) AS reacted_by_me, min(created_at) AS first_at
           FROM reactions WHERE message_id = ANY($1::uuid[])
          GROUP BY message_id, emoji
          ORDER BY message_id, first_at, emoji`,
      [found, viewer.userId],
    );
    // per channel, the two members furthest behind on each cursor: "every other member is at or past
    // the message" is "the furthest-behind member other than the author is", whoever the author is
    const cursors = await m.query<CursorRow[]>(
      `SELECT ch.id AS channel_id, x.kind, x.user_id, x.at_us
           FROM unnest($1::uuid[]) AS ch(id)
           CROSS JOIN LATERAL (
             (SELECT 'd' AS kind, cm.user_id, (extract(epoch FROM cm.last_delivered_at) * 1000000)::bigint::text AS at_us
                FROM channel_members cm WHERE cm.channel_id = ch.id ORDER BY cm.last_delivered_at LIMIT 2)
             UNION ALL
             (SELECT 'r' AS kind, cm.user_id, (extract(epoch FROM cm.last_read_at) * 1000000)::bigint::text AS at_us
                FROM channel_members cm WHERE cm.channel_id = ch.id ORDER BY cm.last_read_at LIMIT 2)
           ) x`,
      [channelIds],
    );
    const settings = await m.query<{ read_receipts: unknown }[]>(
      `SELECT settings->'read_receipts_enabled' AS read_receipts FROM workspaces WHERE id = $1`,
      [viewer.workspaceId],
    );
    // with read receipts off there are no read ticks in either direction (SPEC.md, Realtime)
    const readReceipts = settings[0]?.read_receipts !== false;

    const mentionsOf = groupBy(mentions, (x) => x.message_id);
    const reactionsOf = groupBy(reactions, (x) => x.message_id);
    const cursorsOf = groupBy(cursors, (x) => `${x.channel_id}:${x.kind}`);
    const byId = new Map(rows.map((r) => [r.id, r]));

    const out: MessageView[] = [];
    for (const id of messageIds) {
      const r = byId.get(id);
      if (!r) continue;
      const deleted = r.deleted_at !== null;
      // an unsent message keeps its place in history but says nothing about what it said
      const mentioned = deleted ? [] : (mentionsOf.get(r.id) ?? []);
      const view: MessageView = {
        id: r.id,
        channel_id: r.channel_id,
        channel_external_id: r.channel_external_id,
        user_id: r.user_id,
        user: r.u_id
          ? { id: r.u_id, external_id: r.u_external_id!, name: r.u_name, avatar_url: r.u_avatar_url }
          : null,
        content: deleted ? '' : r.content,
        type: r.type,
        attachment_url: deleted ? null : r.attachment_url,
        attachment: deleted ? null : r.attachment,
        ...(r.parent_id && r.p_id
          ? {
              parent_id: r.parent_id,
              quoted_message: {
                id: r.p_id,
                user_id: r.p_user_id,
                user_name: r.p_user_name,
                content: r.p_deleted_at ? '' : (r.p_content ?? ''),
                type: r.p_type ?? 'text',
                deleted: r.p_deleted_at !== null,
              },
            }
          : {}),
        ...(mentioned.length
          ? {
              mentions: mentioned.map((x) => ({
                user_id: x.user_id,
                external_id: x.external_id,
                name: x.name,
              })),
            }
          : {}),
        reactions: (reactionsOf.get(r.id) ?? []).map((x) => ({
          emoji: x.emoji,
          count: x.count,
          reacted_by_me: x.reacted_by_me,
        })),
        receipt_status: receiptStatus(r, cursorsOf, readReceipts),
        created_at: isoNotNull(r.created_at),
        edited_at: iso(r.edited_at),
        deleted_at: iso(r.deleted_at),
      };
      out.push(view);
    }
    return out;
  }

  /** One message; null when it is not in the workspace. */
  async renderOne(m: EntityManager, viewer: MessageViewer, messageId: string): Promise<MessageView | null> {
    return (await this.render(m, viewer, [messageId]))[0] ?? null;
  }
}

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
  created_at: Date;
}

/**
 * The view of a message the caller has just inserted, as `render` would answer it at that instant:
 * no reactions yet, and `sent` (every other member's cursors were set at an earlier database clock
 * reading than the message's created_at). Saves the send path reading back what it just wrote.
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
    ...(f.parent_id && f.quoted_message ? { parent_id: f.parent_id, quoted_message: f.quoted_message } : {}),
    ...(f.mentions.length
      ? {
          mentions: f.mentions.map((x) => ({ user_id: x.user_id, external_id: x.external_id, name: x.name })),
        }
      : {}),
    reactions: [],
    receipt_status: 'sent',
    created_at: isoNotNull(f.created_at),
    edited_at: null,
    deleted_at: null,
  };
}

function receiptStatus(
  r: MessageRow,
  cursorsOf: Map<string, CursorRow[]>,
  readReceipts: boolean,
): ReceiptStatus {
  const created = BigInt(r.created_us);
  const behind = (kind: 'd' | 'r'): CursorRow | undefined =>
    (cursorsOf.get(`${r.channel_id}:${kind}`) ?? []).find((c) => c.user_id !== r.user_id);
  const slowestDelivered = behind('d');
  if (!slowestDelivered) return 'sent'; // nobody else in the channel
  if (readReceipts) {
    const slowestReader = behind('r');
    if (slowestReader && BigInt(slowestReader.at_us) >= created) return 'read';
  }
  return BigInt(slowestDelivered.at_us) >= created ? 'delivered' : 'sent';
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
