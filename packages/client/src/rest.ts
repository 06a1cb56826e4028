import { ChatApiError, networkError, type ChatErrorCode } from './errors.js';
import type { TokenManager } from './token.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

export interface RestResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

const STATUS_CODES: Record<number, ChatErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

/** `Retry-After` in seconds (whole seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - now) / 1000));
}

/** The service's error body as a ChatApiError (any answer that is not one still becomes one). */
export async function toChatApiError(res: Response): Promise<ChatApiError> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const e = (
    body as
      { error?: { code?: unknown; message?: unknown; details?: unknown; request_id?: unknown } } | undefined
  )?.error;
  const retry = retryAfterSeconds(res.headers.get('retry-after'));
  const requestId =
    typeof e?.request_id === 'string' ? e.request_id : (res.headers.get('x-request-id') ?? undefined);
  return new ChatApiError({
    code: typeof e?.code === 'string' ? (e.code as ChatErrorCode) : (STATUS_CODES[res.status] ?? 'INTERNAL'),
    status: res.status,
    message: typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
    ...(Array.isArray(e?.details) ? { details: e.details as ChatApiError['details'] } : {}),
    ...(requestId ? { requestId } : {}),
    ...(retry !== undefined ? { retryAfterSeconds: retry } : {}),
  });
}

/** JSON over fetch with the user's token; a 401 asks the token provider once more and retries. */
export class RestTransport {
  constructor(
    private readonly baseUrl: string,
    private readonly tokens: TokenManager,
    private readonly fetchImpl: typeof fetch,
  ) {}

  url(path: string, query?: Query): string {
    const u = new URL(
      path.replace(/^\//, ''),
      this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`,
    );
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<RestResponse<T>> {
    let res = await this.send(method, path, opts, await this.tokens.get());
    if (res.status === 401 && this.tokens.refreshable) {
      await res.body?.cancel().catch(() => undefined);
      res = await this.send(method, path, opts, await this.tokens.refresh());
    }
    if (!res.ok) throw await toChatApiError(res);
    const text = res.status === 204 ? '' : await res.text();
    return { status: res.status, headers: res.headers, data: (text ? JSON.parse(text) : undefined) as T };
  }

  async json<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.request<T>(method, path, opts)).data;
  }

  private async send(method: string, path: string, opts: RequestOptions, token: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(this.url(path, opts.query), {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (e) {
      throw networkError(e, 'the request got no answer');
    }
  }
}
