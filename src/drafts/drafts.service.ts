import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import type { ChannelRow } from '../channels/channels.repository';
import type { UserPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { decodeTimeIdCursor, pageOf } from '../common/pagination';
import type { DraftView } from '../contract/events';
import { CHANNEL_ORDER_LOCK_SEED } from '../events/channel-order';
import { EventNotifier } from '../events/event-notifier';
import { asMember, exactTime, isoTime, rows } from '../infra/database/sql';
import { MessageRules } from '../messages/message-rules';
import type { SendMessageDto } from '../messages/dto/send-message.dto';
import type { MyDraftsQueryDto, SaveDraftDto } from './dto/draft.dto';

interface DraftRow extends DraftView {
  id: string;
  updated_key: string;
}

/** Mentioned user ids (a uuid[] column) as external ids, in their order (a user being erased is left out). */
export function mentionsAsExternalIds(column: string): string {
  return `COALESCE((SELECT json_agg(u.external_id ORDER BY x.ord) FROM unnest(${column}) WITH ORDINALITY AS x(id, ord)
  JOIN users u ON u.id = x.id AND u.external_id IS NOT NULL), '[]'::json)`;
}

/** A draft row `d`'s mentions as external ids. */
export const DRAFT_MENTIONS = mentionsAsExternalIds('d.mention_ids');

/** A draft row `d` (with its channel `c`) as CONTRACT §24 shows it, and its list key. */
const DRAFT_COLUMNS = `d.id, d.channel_id, c.external_id AS channel_external_id, d.thread_id, d.parent_id, d.content,
  d.attachment_url, d.metadata, ${isoTime('d.created_at')} AS created_at, ${isoTime('d.updated_at')} AS updated_at,
  ${exactTime('d.updated_at')} AS updated_key, ${DRAFT_MENTIONS} AS mentions`;

/** The draft of a scope: `d` a drafts row, $1 the user, $2 the channel, $3 the thread when there is one. */
function scopeSql(threadId: string | null): string {
  return `d.user_id = $1 AND d.channel_id = $2 AND ${threadId ? 'd.thread_id = $3' : 'd.thread_id IS NULL'}`;
}
function scopeParams(p: UserPrincipal, channelId: string, threadId: string | null): string[] {
  return threadId ? [p.userId, channelId, threadId] : [p.userId, channelId];
}

/**
 * PUT's one statement: the upsert and its `draft.updated` (the draft's columns as DRAFT_COLUMNS shows
 * them) commit together. It first takes the channel's order lock shared (chat_send_message takes it
 * exclusively), before its write is given a transaction id: a save and the user's send into the
 * channel never interleave, so the event log has them in the order their writes happened (a device
 * following it ends with the state the database has), and a save that comes after a send is stamped
 * after it. Held for this statement only.
 */
const SAVE = `WITH l AS (SELECT pg_advisory_xact_lock_shared(hashtextextended($3::uuid::text, ${CHANNEL_ORDER_LOCK_SEED}))),
  up AS (
    INSERT INTO drafts AS d (id, workspace_id, channel_id, user_id, thread_id, parent_id, content, attachment_url,
                             mention_ids, metadata, created_at, updated_at)
    SELECT $1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, $6::uuid, $7::text, $8::text, $9::uuid[], $10::jsonb,
           clock_timestamp(), clock_timestamp() FROM l
    ON CONFLICT (user_id, channel_id, thread_id) DO UPDATE
      SET parent_id = EXCLUDED.parent_id, content = EXCLUDED.content, attachment_url = EXCLUDED.attachment_url,
          mention_ids = EXCLUDED.mention_ids, metadata = EXCLUDED.metadata,
          updated_at = GREATEST(clock_timestamp(), d.updated_at + interval '1 millisecond')
    RETURNING d.*, (xmax = 0) AS created),
  v AS (SELECT ${DRAFT_COLUMNS}, d.created FROM up d JOIN channels c ON c.id = d.channel_id),
  ev AS (
    INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience)
    SELECT chat_new_event_id(), $2::uuid, NULL, NULL, 'draft.updated',
           jsonb_build_object('draft', to_jsonb(v) - 'id' - 'updated_key' - 'created'), ARRAY[$4::uuid]
      FROM v)
  SELECT * FROM v`;

function viewOf(r: DraftRow): DraftView {
  return {
    channel_id: r.channel_id,
    channel_external_id: r.channel_external_id,
    thread_id: r.thread_id,
    parent_id: r.parent_id,
    content: r.content,
    attachment_url: r.attachment_url,
    mentions: r.mentions,
    metadata: r.metadata,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * Drafts (CONTRACT §24): one per (user, channel, thread or none), the user's own only. A save is checked
 * as a send's content is (membership, size, thread root, parent, mentions, attachment URL, metadata),
 * and writes `draft.updated` to the user's sockets and sync in its transaction; a delete writes
 * `draft.deleted` when there was one. The user's send into the scope deletes it in the send's statement
 * (chat_send_message); leaving the channel cascades.
 */
@Injectable()
export class DraftsService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly rules: MessageRules,
    private readonly notifier: EventNotifier,
  ) {}

  /** PUT: the saved draft and whether it is new, or null when the save emptied it (the draft was deleted). */
  async save(
    p: UserPrincipal,
    ref: string,
    dto: SaveDraftDto,
  ): Promise<{ draft: DraftView; created: boolean } | null> {
    const { channel } = await this.access.open(p, ref);
    const content = dto.content;
    if (!content.trim() && !dto.attachment_url) {
      const threadId = dto.thread_id ?? null;
      await this.remove(p, channel, threadId);
      return null;
    }
    this.rules.checkSize(content);
    const checked = await this.rules.validate(
      p.workspaceId,
      channel,
      {
        content,
        thread_id: dto.thread_id,
        parent_id: dto.parent_id,
        mentions: dto.mentions,
        attachment_url: dto.attachment_url,
      } satisfies SendMessageDto,
      content,
      false,
    );
    const [row] = await asMember(() =>
      rows<DraftRow & { created: boolean }>(this.db.manager, SAVE, [
        newId(),
        p.workspaceId,
        channel.id,
        p.userId,
        checked.threadId,
        checked.parentId,
        content,
        checked.attachmentUrl,
        checked.mentions.map((x) => x.user_id),
        JSON.stringify(dto.metadata ?? {}),
      ]),
    );
    if (!row) throw new Error('draft upsert answered nothing');
    this.notifier.committed();
    return { draft: viewOf(row), created: row.created };
  }

  /** GET: the user's draft of the channel (or thread); 404 when there is none. */
  async get(p: UserPrincipal, ref: string, threadId?: string): Promise<DraftView> {
    const { channel } = await this.access.open(p, ref);
    const [row] = await rows<DraftRow>(
      this.db.manager,
      `SELECT ${DRAFT_COLUMNS} FROM drafts d JOIN channels c ON c.id = d.channel_id WHERE ${scopeSql(threadId ?? null)}`,
      scopeParams(p, channel.id, threadId ?? null),
    );
    if (!row) throw AppError.notFound('Draft');
    return viewOf(row);
  }

  /** DELETE: 204 whether or not there was one; `draft.deleted` only when there was. */
  async delete(p: UserPrincipal, ref: string, threadId?: string): Promise<void> {
    const { channel } = await this.access.open(p, ref);
    await this.remove(p, channel, threadId ?? null);
  }

  /** GET /v1/me/drafts: newest `updated_at` first, optionally of one channel. */
  async list(p: UserPrincipal, q: MyDraftsQueryDto) {
    const limit = q.limit ?? 50;
    const cursor = q.before ? decodeTimeIdCursor(q.before) : undefined;
    const channelId = q.channel ? (await this.access.open(p, q.channel)).channel.id : null;
    const found = await rows<DraftRow>(
      this.db.manager,
      `SELECT ${DRAFT_COLUMNS} FROM drafts d JOIN channels c ON c.id = d.channel_id
        WHERE d.user_id = $1 AND ($2::uuid IS NULL OR d.channel_id = $2::uuid)
          AND ($3::timestamptz IS NULL OR (d.updated_at, d.id) < ($3::timestamptz, $4::uuid))
        ORDER BY d.updated_at DESC, d.id DESC LIMIT $5`,
      [p.userId, channelId, cursor?.key ?? null, cursor?.id ?? null, limit + 1],
    );
    const page = pageOf(found, limit, (r) => [r.updated_key, r.id]);
    return { drafts: page.items.map(viewOf), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  private async remove(p: UserPrincipal, channel: ChannelRow, threadId: string | null): Promise<void> {
    if (await deleteDraft(this.db.manager, p.workspaceId, p.userId, channel.id, threadId))
      this.notifier.committed();
  }
}

/**
 * Deletes a user's draft of a channel (or thread) with its `draft.deleted`, in the caller's transaction
 * or as one statement; true when there was one (the caller tells the notifier after its commit).
 */
export async function deleteDraft(
  m: EntityManager,
  workspaceId: string,
  userId: string,
  channelId: string,
  threadId: string | null,
): Promise<boolean> {
  const params = threadId ? [userId, channelId, threadId] : [userId, channelId];
  const [gone] = await rows<{ n: number }>(
    m,
    `WITH gone AS (DELETE FROM drafts d WHERE ${scopeSql(threadId)} RETURNING d.channel_id, d.thread_id),
     ev AS (
       INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience)
       SELECT chat_new_event_id(), $${params.length + 1}::uuid, NULL, NULL, 'draft.deleted',
              jsonb_build_object('channel_id', g.channel_id, 'thread_id', g.thread_id), ARRAY[$1::uuid]
         FROM gone g)
     SELECT count(*)::int AS n FROM gone`,
    [...params, workspaceId],
  );
  return (gone?.n ?? 0) > 0;
}
