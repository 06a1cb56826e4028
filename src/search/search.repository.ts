import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { exactTime } from '../infra/database/sql';
import type { MessageType } from '../messages/message-view.service';
import type { Instant } from '../common/rfc3339';
import type { SearchToken } from './search-tsquery';
import { shadowedFrom } from '../messages/visibility';

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

/** Every query carries the workspace id; the search index is `messages.search_doc` (migration 1763690400000). */
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
   * then created_at and id descending, after the cursor. Every match is ranked before the page is cut;
   * the GIN index on search_doc finds them. Within a channel the query also names the channel's own
   * lexeme, so the index intersects the terms with that channel's postings (docs/SEARCH.md).
   */
  async page(m: EntityManager, q: SearchQuery): Promise<SearchRow[]> {
    const params: unknown[] = [q.workspaceId, q.tsquery];
    const p = (value: unknown) => `$${params.push(value)}`;
    let match = 'm.search_doc @@ $2::tsquery';
    const where = ['m.workspace_id = $1', 'm.deleted_at IS NULL'];
    switch (q.scope.kind) {
      case 'channel':
        match = `m.search_doc @@ ($2::tsquery && ${p(`'#${q.scope.channelId}'`)}::tsquery)`;
        where.push(`m.channel_id = ${p(q.scope.channelId)}`);
        break;
      case 'channels':
        where.push(`m.channel_id = ANY(${p(q.scope.channelIds)}::uuid[])`);
        break;
      case 'workspace':
        break;
    }
    where.push(match);
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
           FROM (SELECT m.id, m.created_at, ts_rank(m.search_doc, $2::tsquery) AS rank
                   FROM messages m
                  WHERE ${where.join(' AND ')}) s
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
