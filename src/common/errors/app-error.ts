/** Error codes of CONTRACT §2 and SPEC.md's error table. Domain code throws these; one filter maps them to HTTP. */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_A_MEMBER'
  | 'NOT_AUTHOR'
  | 'MUTED'
  | 'BANNED'
  | 'CHANNEL_FROZEN'
  | 'NOT_FOUND'
  | 'LAST_ADMIN'
  | 'PIN_LIMIT'
  | 'REMINDER_EXISTS'
  | 'REMINDER_LIMIT'
  | 'SCHEDULED_LIMIT'
  | 'POLL_CLOSED'
  | 'POLL_ANONYMOUS'
  | 'MESSAGE_TOO_LARGE'
  | 'ATTACHMENT_TOO_LARGE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'EDIT_WINDOW_EXPIRED'
  | 'UNSEND_WINDOW_EXPIRED'
  | 'MESSAGE_REJECTED'
  | 'PREVIEW_UNAVAILABLE'
  | 'MESSAGE_DELETED'
  | 'RATE_LIMITED'
  | 'SLOW_MODE'
  | 'INTERNAL'
  | 'UNAVAILABLE';

export interface ErrorDetail {
  field: string;
  message: string;
}

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'The request is invalid',
  UNAUTHORIZED: 'Missing or invalid credentials',
  FORBIDDEN: 'You are not allowed to do this',
  NOT_A_MEMBER: 'You are not a member of this channel',
  NOT_AUTHOR: 'Only the author can do this',
  MUTED: 'You are muted',
  BANNED: 'You are banned',
  CHANNEL_FROZEN: 'The channel is frozen',
  NOT_FOUND: 'Not found',
  LAST_ADMIN: 'The last admin of a group cannot be demoted',
  PIN_LIMIT: 'The channel has as many pinned messages as it may have',
  REMINDER_EXISTS: 'You already have a reminder about this message',
  REMINDER_LIMIT: 'You have as many reminders as you may have',
  SCHEDULED_LIMIT: 'You have as many scheduled messages as you may have',
  POLL_CLOSED: 'The poll is closed',
  POLL_ANONYMOUS: 'The poll is anonymous: nobody can see who voted',
  MESSAGE_TOO_LARGE: 'The message is too large',
  ATTACHMENT_TOO_LARGE: 'The attachment is too large',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'This attachment type is not allowed',
  EDIT_WINDOW_EXPIRED: 'The edit window has expired',
  UNSEND_WINDOW_EXPIRED: 'The unsend window has expired',
  MESSAGE_REJECTED: 'The message was rejected by moderation',
  PREVIEW_UNAVAILABLE: 'No preview could be made of that URL',
  MESSAGE_DELETED: 'The message has been deleted',
  RATE_LIMITED: 'Too many requests',
  SLOW_MODE: 'Slow mode is on in this channel; wait before sending again',
  INTERNAL: 'Internal error',
  UNAVAILABLE: 'A dependency is unavailable, try again shortly',
};

/** Every code, for the OpenAPI document's error schema. */
export const ERROR_CODES = Object.keys(DEFAULT_MESSAGES) as ErrorCode[];

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    /** Seconds, for RATE_LIMITED, SLOW_MODE and UNAVAILABLE (Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message ?? DEFAULT_MESSAGES[code]);
    this.name = 'AppError';
  }

  static validation(field: string, message: string): AppError {
    return new AppError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message }]);
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }
}

export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_ERROR':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
    case 'NOT_A_MEMBER':
    case 'NOT_AUTHOR':
    case 'MUTED':
    case 'BANNED':
    case 'CHANNEL_FROZEN':
    case 'POLL_ANONYMOUS':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'LAST_ADMIN':
    case 'PIN_LIMIT':
    case 'REMINDER_EXISTS':
    case 'REMINDER_LIMIT':
    case 'SCHEDULED_LIMIT':
    case 'POLL_CLOSED':
      return 409;
    case 'MESSAGE_TOO_LARGE':
    case 'ATTACHMENT_TOO_LARGE':
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'EDIT_WINDOW_EXPIRED':
    case 'UNSEND_WINDOW_EXPIRED':
    case 'MESSAGE_REJECTED':
    case 'PREVIEW_UNAVAILABLE':
    case 'MESSAGE_DELETED':
      return 422;
    case 'RATE_LIMITED':
    case 'SLOW_MODE':
      return 429;
    case 'INTERNAL':
      return 500;
    case 'UNAVAILABLE':
      return 503;
  }
}

/** The inner object of the contract's error body; also the `error` of a socket acknowledgement. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
  request_id?: string;
}

export function errorBody(err: AppError, requestId?: string): { error: ErrorBody } {
  const body: ErrorBody = { code: err.code, message: err.message };
  if (err.details?.length) body.details = err.details;
  if (requestId) body.request_id = requestId;
  return { error: body };
}
