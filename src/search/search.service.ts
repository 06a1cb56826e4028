import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeCursor, pageOf } from '../common/pagination';
import { MessageViews } from '../messages/message-view.service';
import type { MessageView } from '../contract/events';
import { SearchQueryDto } from './dto/search-query.dto';
import { parseRfc3339 } from '../common/rfc3339';
import { highlightSpans, Span } from './search-highlights';
import { parseSearchQuery, termsOf } from './search-query.parser';
import { compileQuery, SearchToken } from './search-tsquery';
import { SearchCursor, SearchFilters, SearchRepository, SearchScope } from './search.repository';

export type SearchHit = MessageView & { highlights: Span[] };

export interface SearchPage {
  messages: SearchHit[];
  has_more: boolean;
  next_cursor: string | null;
}

const DEFAULT_PAGE_SIZE = 50;
/** float4 as PostgreSQL prints it (shortest exact form), e.g. 0.0607927, 1e-20 */
const FLOAT_TEXT = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** A rank from a cursor that `::real` accepts: out of float4's range PostgreSQL would raise an error. */
function isFloat4Text(s: string): boolean {
  const n = Number(s);
  return (
    FLOAT_TEXT.test(s) && Number.isFinite(n) && (n === 0 || (Math.abs(n) >= 1.2e-38 && Math.abs(n) <= 3.4e38))
  );
}
const EMPTY: SearchPage = { messages: [], has_more: false, next_cursor: null };

interface Checked {
  filters: SearchFilters;
  cursor?: SearchCursor;
  limit: number;
}

/**
 * CONTRACT §8. Both routes: check the input (400), find the scope (404, 403 NOT_A_MEMBER), tokenize
 * the terms with the index's tokenizer, fetch one ranked page, render it as history does and add the
 * highlights. Unsent messages have no search document, so they never match.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly repo: SearchRepository,
    private readonly views: MessageViews,
  ) {}

  /** GET /v1/channels/:id/messages/search: a user JWT must be a member; a backend key may search any channel. */
  async inChannel(p: WorkspacePrincipal, channelRef: string, dto: SearchQueryDto): Promise<SearchPage> {
    const checked = this.check(dto);
    const { channel } = await this.access.open(p, channelRef);
    return this.run(p, dto.q, checked, { kind: 'channel', channelId: channel.id });
  }

  /** GET /v1/search/messages: a user's channels, or the whole workspace for a backend key. */
  async everywhere(p: WorkspacePrincipal, dto: SearchQueryDto): Promise<SearchPage> {
    const checked = this.check(dto);
    return this.run(
      p,
      dto.q,
      checked,
      p.kind === 'user' ? { kind: 'channels', channelIds: [] } : { kind: 'workspace' },
    );
  }

  private async run(
    p: WorkspacePrincipal,
    q: string,
    checked: Checked,
    scope: SearchScope,
  ): Promise<SearchPage> {
    // NUL cannot reach PostgreSQL text; like any control character it only separates words
    const parsed = parseSearchQuery(q.replaceAll('\u0000', ' '));
    const terms = termsOf(parsed);
    if (!terms.length) return EMPTY;
    const m = this.db.manager;
    const user = p.kind === 'user' ? { userId: p.userId, channels: scope.kind === 'channels' } : null;
    const prep = await this.repo.prepare(
      m,
      p.workspaceId,
      terms.map((t) => t.text),
      user,
    );
    const perTerm: SearchToken[][] = terms.map(() => []);
    for (const t of prep.tokens) perTerm[t.term]?.push(t);
    const compiled = compileQuery(parsed, perTerm);
    if (compiled.tsquery === null) return EMPTY; // nothing but punctuation: nothing can match
    if (compiled.onlyExcluded)
      throw AppError.validation('q', 'needs at least one word or phrase that is not excluded');
    if (scope.kind === 'channels') {
      scope = { kind: 'channels', channelIds: prep.channels ?? [] };
      if (!scope.channelIds.length) return EMPTY;
    }

    const lexemes = compiled.patterns.flat();
    const rows = await this.repo.page(m, {
      workspaceId: p.workspaceId,
      scope,
      tsquery: compiled.tsquery,
      filters: checked.filters,
      hiddenUserIds: prep.blocked ?? [],
      viewerId: p.kind === 'user' ? p.userId : null,
      cursor: checked.cursor,
      take: checked.limit + 1,
      exact: [...new Set(lexemes.filter((l) => !l.prefix).map((l) => l.lexeme))],
      prefixes: [...new Set(lexemes.filter((l) => l.prefix).map((l) => l.lexeme))],
    });
    const page = pageOf(rows, checked.limit, (r) => [r.rank_key, r.created_key, r.id]);
    const views = await this.views.render(
      m,
      { workspaceId: p.workspaceId, userId: p.kind === 'user' ? p.userId : null },
      page.items.map((r) => r.id),
    );
    const byId = new Map(page.items.map((r) => [r.id, r]));
    const messages = views.map((v): SearchHit => {
      const row = byId.get(v.id);
      const tokens = (row?.tokens ?? []).map(([pos, lexeme, start, end]) => ({ pos, lexeme, start, end }));
      return {
        ...v,
        highlights:
          row && row.content === v.content ? highlightSpans(v.content, tokens, compiled.patterns) : [],
      };
    });
    return { messages, has_more: page.has_more, next_cursor: page.next_cursor };
  }

  /** Every 400 of the query string, before anything is looked up. */
  private check(dto: SearchQueryDto): Checked {
    const filters: SearchFilters = {};
    for (const field of ['before', 'after'] as const) {
      const value = dto[field];
      if (value === undefined) continue;
      const instant = parseRfc3339(value);
      if (instant === null)
        throw AppError.validation(field, 'must be an RFC 3339 time, e.g. 2026-11-21T10:00:00.000Z');
      filters[field] = instant;
    }
    if (dto.user !== undefined) {
      if (dto.user.includes('\u0000')) throw AppError.validation('user', 'is not an external id');
      filters.author = dto.user;
    }
    if (dto.type !== undefined) filters.type = dto.type;
    if (dto.has_attachment !== undefined) filters.hasAttachment = dto.has_attachment === 'true';
    let cursor: SearchCursor | undefined;
    if (dto.cursor !== undefined) {
      const [rank, createdKey, id] = decodeCursor(dto.cursor, ['string', 'string', 'string'], 'cursor') as [
        string,
        string,
        string,
      ];
      if (!isFloat4Text(rank) || parseRfc3339(createdKey)?.utc !== createdKey || !isUuid(id)) {
        throw AppError.validation('cursor', 'is not a valid cursor');
      }
      cursor = { rank, createdKey, id };
    }
    return { filters, cursor, limit: dto.limit ?? DEFAULT_PAGE_SIZE };
  }
}
