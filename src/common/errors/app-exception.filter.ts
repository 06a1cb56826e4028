import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorBody, httpStatusOf } from './app-error';
import { toAppError } from './to-app-error';

/** Sends any error as the contract's error body. Shared by the Nest filter and the raw body-parser hook. */
export function sendError(err: unknown, req: Request, res: Response, logger: Logger): void {
  const { error, unexpected } = toAppError(err);
  const requestId = (req as Request & { id?: string }).id;
  if (unexpected) {
    logger.error({ err, requestId }, 'unhandled error');
  }
  if (res.headersSent) return;
  if (error.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  res.status(httpStatusOf(error.code)).json(errorBody(error, requestId));
}

@Catch()
export class AppExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    sendError(exception, ctx.getRequest<Request>(), ctx.getResponse<Response>(), this.logger);
  }
}
