/**
 * main.ts imports this first: when the OTEL_* variables ask for traces, the SDK starts here, before
 * http, express, pg and ioredis are loaded (its instrumentations patch them as they load). Otherwise the
 * SDK is never loaded.
 */
import { tracingRequested } from './tracing';

if (tracingRequested(process.env)) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./sdk') as typeof import('./sdk')).startTracing(process.env);
}
