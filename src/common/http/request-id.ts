import { randomUUID } from 'crypto';
import type { NextFunction, Request, Response } from 'express';

const ACCEPTED = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Takes X-Request-Id from the request when it is sane, else makes one; echoes it on the response. */
export function requestIdMiddleware(req: Request & { id?: string }, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTED.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
  next();
}
