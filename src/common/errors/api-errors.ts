import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto';

/** The statuses of CONTRACT §2 a route can answer with the error body. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/**
 * Documents the errors a route answers, each with the shared `Error` schema. The description names
 * the codes and when, e.g. `{ 404: 'NOT_FOUND: no such channel in the workspace' }`. 401/403 come
 * with @Auth(); the errors of the edge (body parsing, a dependency down) with `documentEdgeErrors`.
 */
export function ApiErrors(errors: Partial<Record<ErrorStatus, string>>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...Object.entries(errors).map(([status, description]) =>
      ApiResponse({ status: Number(status), type: ErrorResponseDto, description }),
    ),
  );
}

/** Descriptions shared by many routes (a channel `:id` is its id or external_id everywhere). */
export const NO_CHANNEL = 'NOT_FOUND: no such channel in the workspace (by id or external_id)';
export const NO_MESSAGE = 'NOT_FOUND: no such message in the workspace';
export const NO_USER = 'NOT_FOUND: no such user in the workspace';
export const NOT_A_MEMBER = 'NOT_A_MEMBER: a user outside the channel';
export const BAD_EXTERNAL_ID =
  'VALIDATION_ERROR: an external_id that is not 1-128 characters without spaces, slashes, ?, # or %';
export const BAD_PAGE = 'VALIDATION_ERROR: a limit outside 1-100, a malformed cursor, an unknown parameter';
