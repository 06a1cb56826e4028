import { prepared } from '../infra/database/prepared';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { SERVICE_VERSION } from '../common/version';
import { rows } from '../infra/database/sql';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import { RateLimiter } from '../infra/rate-limit/rate-limiter';
import { DueSource, Scheduler } from '../scheduler/scheduler.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { PageSummary, summarizePage } from './preview-parser';
import { MAX_PREVIEW_URL } from './linked-urls';

/** CONTRACT §26's preview object: the page's summary and the URL as written. */
export interface LinkPreviewView extends PageSummary {
  url: string;
}

export const PREVIEW_USER_AGENT = `chat-service-previews/${SERVICE_VERSION}`;
const FETCH_MS = 5000;
const MAX_BODY = 1024 * 1024;
const MAX_REDIRECTS = 3;
const CACHE_SECONDS = 3600;
const PER_MINUTE = 30;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** What a fetch came to: a summary, nothing usable, or a URL the address policy refuses. */
type Outcome =
  { kind: 'summary'; summary: PageSummary } | { kind: 'none' } | { kind: 'refused'; why: string };

/**
 * Link previews (CONTRACT §26): a page fetched through the outbound client (its address rules, checked
 * again after every redirect), parsed (preview-parser.ts) and cached per workspace and URL for an hour
 * in `link_previews`, which the scheduler sweeps. `POST /v1/previews` answers one synchronously.
 */
@Injectable()
export class PreviewsService implements DueSource, OnModuleInit {
  readonly name = 'link preview cache';

  constructor(
    private readonly db: DataSource,
    private readonly http: SafeHttpClient,
    private readonly workspaces: WorkspacesService,
    private readonly limiter: RateLimiter,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register(this);
  }

  /** POST /v1/previews. */
  async preview(p: WorkspacePrincipal, raw: string): Promise<LinkPreviewView> {
    if (!(await this.workspaces.settings(p.workspaceId)).link_previews_enabled)
      throw new AppError('FORBIDDEN', 'Link previews are turned off in this workspace');
    const url = this.checkUrl(raw);
    const who = p.kind === 'user' ? p.userId : p.apiKey;
    const decision = await this.limiter.hit(`previews:${who}`, PER_MINUTE, 60_000);
    if (!decision.allowed)
      throw new AppError(
        'RATE_LIMITED',
        `At most ${PER_MINUTE} previews a minute`,
        undefined,
        Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
      );
    const outcome = await this.summary(p.workspaceId, url);
    if (outcome.kind === 'refused') throw AppError.validation('url', outcome.why);
    if (outcome.kind === 'none') throw new AppError('PREVIEW_UNAVAILABLE');
    return { url: raw, ...outcome.summary };
  }

  /**
   * The cached summary of a URL (an hour), else fetched and cached; a refused address is not cached.
   * `allowPrivate`: the address policy to fetch under (default this instance's).
   */
  async summary(workspaceId: string, url: string, allowPrivate?: boolean): Promise<Outcome> {
    // a page cached under a permissive policy is not served to a request that would refuse its address
    const early = this.http.staticRefusal(new URL(url), allowPrivate ?? this.http.allowsPrivateNetworks);
    if (early) return { kind: 'refused', why: early };
    const [cached] = await rows<{ preview: PageSummary | null }>(
      this.db.manager,
      `SELECT preview FROM link_previews
        WHERE workspace_id = $1 AND url = $2 AND fetched_at > now() - make_interval(secs => ${CACHE_SECONDS})`,
      [workspaceId, url],
    );
    if (cached) return cached.preview ? { kind: 'summary', summary: cached.preview } : { kind: 'none' };
    const page = await this.http.get({
      url,
      headers: { 'User-Agent': PREVIEW_USER_AGENT, Accept: 'text/html,application/xhtml+xml' },
      timeoutMs: FETCH_MS,
      maxBytes: MAX_BODY,
      maxRedirects: MAX_REDIRECTS,
      accept: (type) => HTML_TYPES.has(type),
      allowPrivateNetworks: allowPrivate,
    });
    if (page.kind === 'refused') return { kind: 'refused', why: page.error };
    const summary = page.kind === 'page' ? summarizePage(page.body.toString('utf8'), page.url) : null;
    await this.db.query(
      `INSERT INTO link_previews (workspace_id, url, preview, fetched_at) VALUES ($1, $2, $3::jsonb, now())
       ON CONFLICT (workspace_id, url) DO UPDATE SET preview = EXCLUDED.preview, fetched_at = EXCLUDED.fetched_at`,
      [workspaceId, url, summary ? JSON.stringify(summary) : null],
    );
    return summary ? { kind: 'summary', summary } : { kind: 'none' };
  }

  /** The scheduler's pass: expired cache rows, `limit` at a time (the `link_previews_expiry` index). */
  async fireDue(limit: number): Promise<number> {
    const gone = await prepared<{ url: string }>(
      this.db.manager,
      `DELETE FROM link_previews l USING (
         SELECT workspace_id, url FROM link_previews
          WHERE fetched_at <= statement_timestamp() - make_interval(secs => ${CACHE_SECONDS})
          ORDER BY fetched_at LIMIT $1) x
        WHERE l.workspace_id = x.workspace_id AND l.url = x.url RETURNING l.url`,
      [limit],
    );
    return gone.length;
  }

  /** An absolute http(s) URL of at most 2,048 characters (else 400); the address is the fetch's to check. */
  private checkUrl(raw: string): string {
    let url: URL | null = null;
    try {
      url = raw.length <= MAX_PREVIEW_URL ? new URL(raw) : null;
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname)
      throw AppError.validation(
        'url',
        `must be an absolute http or https URL of at most ${MAX_PREVIEW_URL} characters`,
      );
    const refusal = this.http.staticRefusal(url);
    if (refusal) throw AppError.validation('url', refusal);
    return url.toString();
  }
}
