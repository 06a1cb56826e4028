import type {
  CorsOptions,
  CorsOptionsDelegate,
} from '@nestjs/common/interfaces/external/cors-options.interface';
import type { IncomingMessage } from 'http';

/** SERVICE_CORS_ORIGINS after defaults: `*` (any origin) or the allowed origins, maybe none. */
export type CorsOrigins = '*' | readonly string[];

/** The request headers the API reads from browsers (the idempotency key travels in the body). */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'];
/** Response headers a browser app needs to read: the rate-limit wait, the request id, an idempotent replay. */
export const CORS_EXPOSED_HEADERS = ['Retry-After', 'X-Request-Id', 'Idempotent-Replayed'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may cache a preflight (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The REST policy (the `cors` middleware Nest wraps): an allowed origin gets
 * `Access-Control-Allow-Origin`, any other none; preflights are answered 204 before routing, body
 * parsing, input checks and auth. No credentials: the API authenticates with headers, never cookies.
 * `skip` paths keep their own policy (signed upload and file URLs answer any origin themselves).
 */
export function restCors(
  origins: CorsOrigins,
  skip: (path: string) => boolean,
): CorsOptionsDelegate<IncomingMessage> {
  const options: CorsOptions = {
    origin: origins === '*' ? '*' : [...origins],
    methods: METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    credentials: false,
    optionsSuccessStatus: 204,
  };
  // `origin: false` makes the middleware step aside entirely
  return (req, done) => done(null, skip(req.url ?? '') ? { origin: false } : options);
}

/**
 * Whether a browser on `origin` may open a socket. Browsers do not apply CORS to WebSocket, so the
 * handshake itself checks the Origin header: absent (not a browser: servers, mobile apps) or the
 * service's own host pass; otherwise it must be allowed.
 */
export function socketOriginAllowed(origins: CorsOrigins, req: Pick<IncomingMessage, 'headers'>): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origins === '*') return true;
  if (origins.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
