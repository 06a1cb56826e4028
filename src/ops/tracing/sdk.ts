import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { NestInstrumentation } from '@opentelemetry/instrumentation-nestjs-core';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { SERVICE_VERSION } from '../../common/version';
import { tracingStarted } from './tracing';

/** Incoming requests that are not traced: probes, the metrics scrape, Socket.IO's own transport requests. */
const UNTRACED = /^\/(healthz|readyz|livez|metrics)(\?|$)|^\/socket\.io\//;

/**
 * Starts the OpenTelemetry Node SDK for traces only (the service's metrics are Prometheus's, its logs
 * pino's). Everything else comes from the standard OTEL_* variables: the exporter and its endpoint,
 * protocol and headers, the sampler, the batch processor, the resource. Loaded only when tracing is
 * asked for (preload.ts), before the modules the instrumentations patch.
 */
export function startTracing(env: NodeJS.ProcessEnv): void {
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ? undefined : 'chat-service',
    resource: resourceFromAttributes({
      'service.version': SERVICE_VERSION,
      'chat.service.role': env.SERVICE_ROLE || 'all',
    }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.test(req.url ?? ''),
      }),
      // the route and its handler; not a span per middleware on every request
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new NestInstrumentation(),
      // statements and Redis commands only within a traced unit of work, not every follower poll; no span
      // for a connection checked out of the pool (two per send: its wait shows as the gap before a statement)
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  tracingStarted(() => sdk.shutdown());
}
