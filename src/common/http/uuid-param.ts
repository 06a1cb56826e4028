import { ParseUUIDPipe } from '@nestjs/common';
import { AppError } from '../errors/app-error';

/** A path id that must be a UUID: anything else names nothing, so 404 `<what> not found` (never a SQL error). */
export function uuidParam(what: string): ParseUUIDPipe {
  return new ParseUUIDPipe({ exceptionFactory: () => AppError.notFound(what) });
}
