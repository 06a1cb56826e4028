import { INestApplication, Logger as NestLogger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { json } from 'express';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { isSignedUrlPath, UPLOADS_PREFIX } from './attachments/uploads.service';
import { sendError } from './common/errors/app-exception.filter';
import { createValidationPipe } from './common/errors/validation';
import { restCors } from './common/http/cors';
import { buildOpenApiDocument } from './common/http/openapi';
import { requestIdMiddleware } from './common/http/request-id';
import { requestLogMiddleware, rootLogger } from './common/http/request-log';
import type { AppConfig } from './config/config.schema';
import { DEMO_PREFIX, demoStatic } from './demo/demo-static';
import { Draining } from './ops/draining';
import { LoadShedder } from './admission/load-shedder';
import { Metrics } from './ops/metrics';
import { RedisService } from './infra/redis/redis.module';
import { RealtimeIoAdapter } from './realtime/realtime-io.adapter';
import { inputHygieneMiddleware } from './common/http/input-hygiene';
import type { Server } from 'http';
import type { Duplex } from 'stream';
import { SERVICE_VERSION } from './common/version';

export const BODY_LIMIT_BYTES = 256 * 1024;
export const VERSION = SERVICE_VERSION;

/** Builds the application exactly as production runs it; main.ts and the e2e tests both use this. */
export async function createApp(
  config: AppConfig,
  opts: { logs?: boolean } = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
    logger: opts.logs === false ? false : undefined,
  });
  if (opts.logs !== false) app.useLogger(app.get(Logger));
  app.set('trust proxy', true);
  app.disable('x-powered-by');

  const errorLogger = new NestLogger('Errors');
  const parseJson = json({ limit: BODY_LIMIT_BYTES });
  const draining = app.get(Draining);
  // shutting down (src/main.ts): each answer closes its connection, so keep-alive clients reconnect elsewhere
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (draining.active) res.setHeader('Connection', 'close');
    next();
  });
  app.use(requestIdMiddleware);
  if (config.LOG_LEVEL !== 'silent') app.use(requestLogMiddleware(rootLogger(config)));
  app.use(app.get(Metrics).middleware());
  // the demo app's static files (same origin: no CORS, no body, no auth); its sign-in route is src/demo
  if (config.SERVICE_ROLE !== 'worker') app.use(DEMO_PREFIX, demoStatic(config));
  // CORS (SERVICE_CORS_ORIGINS) before body parsing, input checks, routing and auth: preflights end here
  app.enableCors(restCors(config.corsOrigins, isSignedUrlPath));
  // body-parser errors (too large, bad JSON) happen before Nest: answer them in the contract's shape here.
  // Local-driver uploads are raw bodies of any allowed type, streamed to disk by their own route.
  app.use((req: Request, res: Response, next: NextFunction) =>
    req.path.startsWith(UPLOADS_PREFIX)
      ? next()
      : parseJson(req, res, (err?: unknown) => (err ? sendError(err, req, res, errorLogger) : next())),
  );
  // an instance that cannot keep up refuses new work at once (503); a request counts once its body is
  // read, so a client that sends its body slowly holds a connection, not a turn
  app.use(app.get(LoadShedder).middleware());
  // one check of every input at the edge: NUL bytes, lone surrogates, nesting depth (issue 11)
  app.use(inputHygieneMiddleware((err, req, res) => sendError(err, req, res, errorLogger)));
  answerClientErrors(app.getHttpServer());
  app.useGlobalPipes(createValidationPipe());
  app.useWebSocketAdapter(
    new RealtimeIoAdapter(
      app,
      app.get(RedisService),
      config.corsOrigins,
      app.get(Metrics),
      config.SERVICE_REDIS_ADAPTER,
    ),
  );
  // no enableShutdownHooks(): main.ts owns SIGTERM/SIGINT and calls app.close() once (two concurrent
  // closes ran every shutdown hook twice: "Called end on pool more than once", exit code 1)
  // a worker serves health and metrics only: no routes to document
  if (config.SERVICE_ROLE !== 'worker') setupOpenApi(app, config);
  return app;
}

export function setupOpenApi(app: INestApplication, config: AppConfig): void {
  const document = buildOpenApiDocument(app, { version: VERSION, serverUrl: config.baseUrl });
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'chat-service API',
  });
}

/**
 * Requests Node's HTTP parser refuses before any route (headers over its 16 KiB limit, malformed
 * request lines) are answered in the contract's error shape too: 431 for oversized headers, else 400.
 */
function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (err.code === 'ECONNRESET' && socket.destroyed)) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify({
      error: {
        code: 'VALIDATION_ERROR',
        message: tooLarge
          ? 'The request headers are too large (at most 16 KiB)'
          : 'The request could not be parsed',
      },
    });
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
