import type { ErrorCode, ErrorDetail } from './generated/types.gen.js';

/** The contract's error codes, plus `NETWORK_ERROR` (status 0) when no answer came at all. */
export type ChatErrorCode = ErrorCode | 'NETWORK_ERROR';

/**
 * Every failure of a REST call (and of a socket acknowledgement): the service's error body
 * `{error: {code, message, details?, request_id}}` with the HTTP status and, on 429 and 503, the
 * `Retry-After` header in seconds.
 */
export class ChatApiError extends Error {
  override readonly name = 'ChatApiError';
  readonly code: ChatErrorCode;
  /** HTTP status; 0 when the request never got an answer (network down, aborted). */
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly requestId?: string;
  /** Seconds to wait before retrying, from `Retry-After` (429 RATE_LIMITED / SLOW_MODE, 503 UNAVAILABLE). */
  readonly retryAfterSeconds?: number;

  constructor(init: {
    code: ChatErrorCode;
    status: number;
    message: string;
    details?: ErrorDetail[];
    requestId?: string;
    retryAfterSeconds?: number;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    if (init.details) this.details = init.details;
    if (init.requestId) this.requestId = init.requestId;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** Worth retrying with the same request (and, for a send, the same idempotency key). */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status === 503 || this.status >= 500;
  }
}

/** A request that got no answer at all (network down, aborted): status 0, `NETWORK_ERROR`, retryable. */
export function networkError(cause: unknown, fallbackMessage: string): ChatApiError {
  return new ChatApiError({
    code: 'NETWORK_ERROR',
    status: 0,
    message: cause instanceof Error ? cause.message : fallbackMessage,
    cause,
  });
}

export function isChatApiError(e: unknown): e is ChatApiError {
  return e instanceof ChatApiError;
}
