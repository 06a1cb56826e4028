import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

/** How deep a JSON body (or socket payload) may nest; the API's deepest shape needs 4 or 5. */
export const MAX_JSON_DEPTH = 32;

/** A NUL (PostgreSQL cannot store it in text) or a UTF-16 surrogate without its pair (not text at all). */
// eslint-disable-next-line no-control-regex -- finding the NUL character is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;
const UNSTORABLE_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * Checks input before any route sees it: nesting deeper than MAX_JSON_DEPTH and strings (values and keys)
 * PostgreSQL cannot store are 400 VALIDATION_ERROR, naming the field. Recursion stops at the depth
 * limit, so a hostile document cannot exhaust the stack here or in validation after it.
 */
export function checkInput(value: unknown, field: string): void {
  walk(value, field, 0);
}

function walk(value: unknown, path: string, depth: number): void {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) throw AppError.validation(path || 'body', UNSTORABLE_RULE);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_JSON_DEPTH)
    throw AppError.validation(path || 'body', `nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, `${path}[${i}]`, depth + 1));
    return;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const at = path ? `${path}.${k}` : k;
    if (UNSTORABLE.test(k)) throw AppError.validation(at, `(a key) ${UNSTORABLE_RULE}`);
    walk(v, at, depth + 1);
  }
}

/** `%00` in a path, or percent-encoding that is not UTF-8 (a lone surrogate's bytes, say). */
function pathProblem(path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return 'is not valid percent-encoded UTF-8';
  }
  return UNSTORABLE.test(decoded) ? UNSTORABLE_RULE : null;
}

/** Express middleware, after the body parser: the path, the query and the JSON body. */
export function inputHygieneMiddleware(onError: (err: unknown, req: Request, res: Response) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    try {
      const problem = pathProblem(req.path);
      if (problem) throw AppError.validation('path', problem);
      checkInput(req.query, '');
      if (req.body !== undefined) checkInput(req.body, '');
    } catch (err) {
      onError(err, req, res);
      return;
    }
    next();
  };
}
