import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { exactTime } from '../infra/database/sql';
import type { MessageType } from '../contract/events';
import type { Instant } from '../common/rfc3339';
import type { SearchToken } from './search-tsquery';
import { shadowedFrom } from '../messages/visibility';
import { SEARCH_CURSOR } from './search-indexer';

/** Where to look: one channel, a user's channels, or (a backend key) the whole workspace. */
export type SearchScope =
  { kind: 'channel'; channelId: string } | { kind: 'channels'; channelIds: string[] } | { kind: 'workspace' };

export interface SearchFilters {
  /** The author's external id. */
  author?: string;
  type?: MessageType;
  hasAttachment?: boolean;
  before?: Instant;
  after?: Instant;
}

/** The sort key of the last row of the previous page: relevance as float4 text, created_at to the µs, id. */
export interface SearchCursor {
  rank: string;
  createdKey: string;
  id: string;
}

export interface SearchQuery {
  workspaceId: string;
  scope: SearchScope;
  /** tsquery text of the terms; also what results are ranked by. */
  tsquery: string;
  filters: SearchFilters;
  /** Authors the viewer blocks: their messages never match. */
  hiddenUserIds: string[];
  /** The searching user (null for a backend key): others' shadowed messages are left out for them. */
  viewerId?: string | null;
  cursor?: SearchCursor;
  /** Rows to fetch (page size + 1). */
  take: number;
  /** Lexemes whose occurrences to return for highlighting: exact ones, and one-character prefixes. */
  exact: string[];
  prefixes: string[];
}

export interface SearchRow {
  id: string;
  rank_key: string;
  created_key: string;
  content: string;
  /** [pos, lexeme, start, end] of the tokens that can take part in a highlight, code point offsets */
  tokens: [number, string, number, number][];
}

export interface SearchPrep {
  tokens: (SearchToken & { term: number })[];
  channels: string[] | null;
  blocked: string[] | null;
}

/**
 * The newest messages not yet indexed that a search computes documents for (the indexer keeps this a
 * handful; after an outage of it longer than this, older unindexed ones are found once it caught up).
 */
const UNINDEXED_MAX = 10_000;

/** Every query carries the workspace id; the search index is `message_search` (migration 1763691090000). */
@Injectable()
export class SearchRepository {
  /**
   * One round trip before the search: the query's terms through the index's own tokenizer, and, for a
   * user, the channels they belong to (only when searching across channels) and the users they block.
   */
  async prepare(
    m: EntityManager,
    workspaceId: string,
    terms: string[],
    user: { userId: string; channels: boolean } | null,
  ): Promise<SearchPrep> {
    const rows: SearchPrep[] = await m.query(
      `SELECT (SELECT coalesce(json_agg(json_build_object('term', u.i - 1, 'pos', t.pos, 'lexeme', t.lexeme, 'kind', t.kind)), '[]'::json)
                 FROM unnest($2::text[]) WITH ORDINALITY AS u(txt, i), search_tokens(u.txt) AS t) AS tokens,
              CASE WHEN $4 THEN ARRAY(SELECT cm.channel_id::text FROM channel_members cm WHERE cm.workspace_id = $1 AND cm.user_id = $3) END AS channels,
              CASE WHEN $3::uuid IS NOT NULL THEN ARRAY(SELECT b.blocked_id::text FROM blocks b WHERE b.workspace_id = $1 AND b.blocker_id = $3) END AS blocked`,
      [workspaceId, terms, user?.userId ?? null, user?.channels ?? false],
    );
    return rows[0]!;
  }

  /**
   * One page of matches, best first: relevance (ts_rank, a float4 compared exactly through its text),
   * then created_at and id descending, after the cursor. Every match is ranked before the page is cut.
   * The documents are message_search's, which the search indexer writes off the send's path (GIN index
   * `message_search_doc`; within a channel the query also names the channel's own lexeme, so the index
   * intersects the terms with that channel's postings, docs/SEARCH.md), and, for the messages whose
   * `message.created` events lie after the indexer's cursor (committed in the same statement as the
   * documents), documents computed here: a message is found as soon as its send committed. A message
   * with a document is matched by it only (an edit or unsend may have written it before the indexer).
   */
  async page(m: EntityManager, q: SearchQuery): Promise<SearchRow[]> {
    const params: unknown[] = [q.workspaceId, q.tsquery];
    const p = (value: unknown) => `$${params.push(value)}`;
    let indexed = 'x.doc @@ $2::tsquery';
    const where = ['m.workspace_id = $1', 'm.deleted_at IS NULL'];
    switch (q.scope.kind) {
      case 'channel': {
        const channel = p(q.scope.channelId);
        indexed = `x.channel_id = ${channel} AND x.doc @@ ($2::tsquery && ${p(`'#${q.scope.channelId}'`)}::tsquery)`;
        where.push(`m.channel_id = ${channel}`);
        break;
      }
      case 'channels': {
        const channels = p(q.scope.channelIds);
        indexed = `x.channel_id = ANY(${channels}::uuid[]) AND x.doc @@ $2::tsquery`;
        where.push(`m.channel_id = ANY(${channels}::uuid[])`);
        break;
      }
      case 'workspace':
        break;
    }
    // the blocked authors as one array (fetched with the query's terms), the shadow rule as everywhere else
    if (q.hiddenUserIds.length)
      where.push(`(m.user_id IS NULL OR m.user_id <> ALL(${p(q.hiddenUserIds)}::uuid[]))`);
    if (q.viewerId) where.push(`NOT ${shadowedFrom('m', `${p(q.viewerId)}::uuid`)}`);
    const f = q.filters;
    if (f.author !== undefined)
      where.push(
        `m.user_id = (SELECT u.id FROM users u WHERE u.workspace_id = $1 AND u.external_id = ${p(f.author)})`,
      );
    if (f.type !== undefined) where.push(`m.type = ${p(f.type)}`);
    if (f.hasAttachment !== undefined) where.push(`m.attachment_url IS ${f.hasAttachment ? 'NOT ' : ''}NULL`);
    // compared at the precision the time was written with, as a client reads created_at: with
    // after=10:00:00.123Z a message shown as sent at 10:00:00.123Z (stored as .123456) is not newer
    if (f.before !== undefined) where.push(`m.created_at < ${p(f.before.utc)}::timestamptz`);
    if (f.after !== undefined)
      where.push(
        `m.created_at >= ${p(f.after.utc)}::timestamptz + ${p(f.after.unitMicros)}::int * interval '1 microsecond'`,
      );
    const after = q.cursor
      ? `WHERE (s.rank, s.created_at, s.id) < (${p(q.cursor.rank)}::real, ${p(q.cursor.createdKey)}::timestamptz, ${p(q.cursor.id)}::uuid)`
      : '';
    const take = p(q.take);
    const exact = p(q.exact);
    const prefixes = p(q.prefixes);
    return m.query(
      `WITH hits AS (
         SELECT s.id, s.rank, s.created_at
           FROM (SELECT m.id, m.created_at, ts_rank(x.doc, $2::tsquery) AS rank
                   FROM message_search x JOIN messages m ON m.id = x.message_id
                  WHERE ${indexed} AND ${where.join(' AND ')}
                 UNION ALL
                 SELECT m.id, m.created_at, ts_rank(d.doc, $2::tsquery) AS rank
                   FROM (SELECT (e.payload->'message'->>'id')::uuid AS id
                           FROM events e
                          WHERE e.workspace_id = $1 AND e.type = 'message.created'
                            AND (e.tx_id, e.position) > ((SELECT c.tx_id FROM event_relay_cursors c WHERE c.name = '${SEARCH_CURSOR}'),
                                                         (SELECT c.position FROM event_relay_cursors c WHERE c.name = '${SEARCH_CURSOR}'))
                          ORDER BY e.tx_id DESC, e.position DESC LIMIT ${UNINDEXED_MAX}) f
                   JOIN messages m ON m.id = f.id
                  CROSS JOIN LATERAL (SELECT chat_search_doc(m.content, m.channel_id) AS doc) d
                  WHERE d.doc @@ $2::tsquery AND ${where.join(' AND ')}
                    AND NOT EXISTS (SELECT 1 FROM message_search x WHERE x.message_id = m.id)) s
           ${after}
          ORDER BY s.rank DESC, s.created_at DESC, s.id DESC
          LIMIT ${take})
       SELECT h.id, h.rank::text AS rank_key, ${exactTime('h.created_at')} AS created_key, msg.content,
              (SELECT coalesce(json_agg(json_build_array(t.pos, t.lexeme, t.start_at, t.end_at)), '[]'::json)
                 FROM search_tokens(msg.content) AS t
                WHERE t.lexeme = ANY(${exact}::text[]) OR left(t.lexeme, 1) = ANY(${prefixes}::text[])) AS tokens
         FROM hits h JOIN messages msg ON msg.id = h.id AND msg.workspace_id = $1
        ORDER BY h.rank DESC, h.created_at DESC, h.id DESC`,
      params,
    );
  }
}
