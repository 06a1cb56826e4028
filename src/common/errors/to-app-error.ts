import { HttpException } from '@nestjs/common';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import { QueryRunnerAlreadyReleasedError } from 'typeorm';
import { AppError, ErrorCode } from './app-error';

/** Driver and framework errors that mean "a dependency is down", not "a bug". */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

/**
 * A database that went away under a request: a restart, not a bug. SQLSTATEs of class 08 (connection
 * exceptions) and 57P01-57P03 (terminated by an administrator, crash shutdown, cannot connect now);
 * TypeORM's query runner released under a transaction when its connection failed; node-postgres's own
 * connection errors, which carry no code, only their fixed messages: the connection lost mid-query, a
 * client that failed or was closed being queried again.
 */
function databaseGone(err: unknown, code: unknown, message: string): boolean {
  if (
    typeof code === 'string' &&
    (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')
  )
    return true;
  if (err instanceof QueryRunnerAlreadyReleasedError) return true;
  return /Connection terminated unexpectedly|Client has encountered a connection error|Client was closed and is not queryable/.test(
    message,
  );
}

/**
 * ioredis's refusals while Redis is away: a command given up after its reconnection attempts
 * (MaxRetriesPerRequestError), one issued on a connection that is closed or not writable.
 */
function redisGone(err: unknown, message: string): boolean {
  if (err instanceof MaxRetriesPerRequestError) return true;
  return /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false)/.test(
    message,
  );
}

/**
 * SQLSTATEs PostgreSQL answers for text it cannot store: 22021 (a NUL byte in text), 22P05 (`\u0000` in
 * JSON). Input the request carried, so a 400, never a 500 (the statement wrote nothing).
 */
const UNSTORABLE_TEXT_STATES = new Set(['22021', '22P05']);

/** Maps anything thrown to an AppError; returns the original cause separately for logging. */
export function toAppError(err: unknown): { error: AppError; unexpected: boolean } {
  if (err instanceof AppError) return { error: err, unexpected: false };
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const code: ErrorCode =
      status === 404
        ? 'NOT_FOUND'
        : status === 413
          ? 'PAYLOAD_TOO_LARGE'
          : status === 401
            ? 'UNAUTHORIZED'
            : status === 403
              ? 'FORBIDDEN'
              : status === 415
                ? 'UNSUPPORTED_MEDIA_TYPE'
                : status >= 500
                  ? 'INTERNAL'
                  : 'VALIDATION_ERROR';
    const message = code === 'NOT_FOUND' ? 'No such route' : code === 'INTERNAL' ? undefined : err.message;
    return { error: new AppError(code, message), unexpected: status >= 500 };
  }
  const e = err as { code?: unknown; type?: unknown; status?: unknown; expose?: unknown };
  if (typeof e?.code === 'string' && UNAVAILABLE_ERRNOS.has(e.code)) {
    return { error: new AppError('UNAVAILABLE', undefined, undefined, 5), unexpected: true };
  }
  // the database pool had no free connection in time: overload, not a bug (pg: "timeout exceeded when
  // trying to connect"; TypeORM wraps it); PostgreSQL refusing connections (53300) likewise
  const message = err instanceof Error ? err.message : '';
  if (
    /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(
      message,
    ) ||
    e?.code === '53300'
  ) {
    return {
      error: new AppError('UNAVAILABLE', 'The service is overloaded, try again shortly', undefined, 2),
      unexpected: true,
    };
  }
  if (databaseGone(err, e?.code, message) || redisGone(err, message)) {
    return { error: new AppError('UNAVAILABLE', undefined, undefined, 2), unexpected: true };
  }
  if (typeof e?.code === 'string' && UNSTORABLE_TEXT_STATES.has(e.code)) {
    return {
      error: new AppError('VALIDATION_ERROR', 'Text must not contain NUL characters (\\u0000)'),
      unexpected: false,
    };
  }
  // body-parser errors (raised before Nest sees the request)
  if (e?.type === 'entity.too.large') return { error: new AppError('PAYLOAD_TOO_LARGE'), unexpected: false };
  if (e?.type === 'entity.parse.failed') {
    return { error: new AppError('VALIDATION_ERROR', 'The body is not valid JSON'), unexpected: false };
  }
  // other body-parser refusals: an unknown Content-Encoding (typed), bytes that do not inflate as their
  // Content-Encoding says (zlib's error, made a 400 by http-errors: untyped, but `expose`d)
  if (
    (typeof e?.type === 'string' || e?.expose === true) &&
    typeof e.status === 'number' &&
    e.status >= 400 &&
    e.status < 500
  ) {
    return {
      error: new AppError(
        e.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'VALIDATION_ERROR',
        'The body could not be read',
      ),
      unexpected: false,
    };
  }
  return { error: new AppError('INTERNAL'), unexpected: true };
}
