import type { NextFunction, Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { performance } from 'perf_hooks';
import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { AppConfig } from '../../config/config.schema';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-service-signature"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  '*.api_secret',
  '*.apiSecret',
  '*.signing_secret',
  '*.token',
  '*.password',
  '*.secret',
];

/** A request slower than this is logged (at warn) whatever its status. */
export const SLOW_REQUEST_MS = 1000;

/** Probes and scrapes: not logged at debug either. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export function stripTokenFromUrl(url: string | undefined): string | undefined {
  return url?.replace(/([?&](?:token|sig|signature)=)[^&]*/gi, '$1[Redacted]');
}

// one root logger per configuration (tests start several applications in one process)
const roots = new WeakMap<AppConfig, Logger>();

/** Fields of a failed statement's error that carry the values it was given (user data), never logged. */
const STATEMENT_VALUES = ['parameters', 'detail', 'where'];

/**
 * pino's error serializer, less the bound values of a failed SQL statement (TypeORM's `parameters`, and
 * pg's `detail`, which quotes key values), on the error and on the driver error it wraps.
 */
export function errorSerializer(err: unknown): unknown {
  const out = stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  for (const target of [out, out.driverError as Record<string, unknown> | undefined]) {
    if (!target || typeof target !== 'object') continue;
    for (const k of STATEMENT_VALUES) if (k in target) target[k] = '[Redacted]';
  }
  return out;
}

/** A pino logger at `level` with the credentials redacted; JSON lines on stdout unless told otherwise. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
    serializers: { err: errorSerializer },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The application's logger (LOG_LEVEL), one per configuration. */
export function rootLogger(config: AppConfig): Logger {
  let root = roots.get(config);
  if (!root) {
    root = createLogger(config.LOG_LEVEL);
    roots.set(config, root);
  }
  return root;
}

/**
 * nestjs-pino as the Nest logger only (app.useLogger): it writes through the root logger and adds no
 * middleware (no pino-http child loggers, no AsyncLocalStorage per request); requestLogMiddleware logs
 * the requests.
 */
export function loggerModuleParams(config: AppConfig): Params {
  return { pinoHttp: { logger: rootLogger(config) }, useExisting: true, forRoutes: [] };
}

/**
 * Request logging that costs one 'close' listener per request: a line (as pino-http wrote it: req, res,
 * responseTime, request_id) only for what someone needs to look at: 5xx at error, 4xx, slow requests
 * (≥ SLOW_REQUEST_MS) and requests the client gave up on at warn; every other request only at debug.
 * The request id comes from requestIdMiddleware, which must run first.
 */
export function requestLogMiddleware(logger: Logger) {
  const debug = () => logger.isLevelEnabled('debug');
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('close', () => {
      const responseTime = Math.round(performance.now() - started);
      const status = res.statusCode;
      const aborted = !res.writableFinished;
      const level =
        status >= 500
          ? 'error'
          : status >= 400 || aborted || responseTime >= SLOW_REQUEST_MS
            ? 'warn'
            : debug() && !QUIET_PATHS.has(req.path)
              ? 'debug'
              : null;
      if (!level || !logger.isLevelEnabled(level)) return;
      const url = stripTokenFromUrl(req.originalUrl || req.url);
      const id = (req as Request & { id?: string }).id;
      logger[level](
        {
          request_id: id,
          req: { id, method: req.method, url, headers: req.headers },
          res: { statusCode: status },
          responseTime,
          ...(aborted ? { aborted: true } : {}),
          ...(responseTime >= SLOW_REQUEST_MS ? { slow: true } : {}),
        },
        aborted ? 'request aborted' : status >= 500 ? 'request errored' : 'request completed',
      );
    });
    next();
  };
}
