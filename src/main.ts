// first: tracing, when asked for, patches modules as they load (src/ops/tracing/preload.ts)
import './ops/tracing/preload';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, environment, loadConfig } from './config/config.schema';
import { assertDataDirFree, DataDirLockedError } from './infra/database/data-dir-lock';
import { Draining } from './ops/draining';
import { Metrics } from './ops/metrics';
import { flushTracing } from './ops/tracing/tracing';
import { unhandledRejectionHandler } from './ops/unhandled-rejections';

/** From the end of SERVICE_SHUTDOWN_DELAY_SECONDS to the exit (the Helm chart's grace period allows for it). */
const SHUTDOWN_DEADLINE_MS = 9_500;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(environment());
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  if (config.embedded && !config.SERVICE_DATA_DIR.startsWith('memory://')) {
    try {
      await assertDataDirFree(config.SERVICE_DATA_DIR);
    } catch (e) {
      if (e instanceof DataDirLockedError) {
        process.stderr.write(`chat-service: ${e.message}\n`);
        process.exit(1);
      }
      throw e;
    }
  }
  // loaded after the checks above, so a bad configuration or a busy directory is answered at once
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createApp } = require('./app.factory') as typeof import('./app.factory');
  const started = Date.now();
  // before anything starts: a rejection nobody handled is logged and counted, never the end of the process
  const counting: { metrics?: Metrics } = {};
  process.on(
    'unhandledRejection',
    unhandledRejectionHandler(new Logger('Process'), () => counting.metrics),
  );
  const app = await createApp(config);
  counting.metrics = app.get(Metrics);
  await app.listen(config.PORT);
  process.stdout.write(
    `chat-service (${config.SERVICE_ROLE}) listening on ${config.baseUrl} in ${Date.now() - started} ms ` +
      `[${config.embedded ? `embedded database in ${config.SERVICE_DATA_DIR}` : 'PostgreSQL'}, ` +
      `${config.REDIS_URL ? 'Redis' : 'in-process adapters'}]; API docs at ${config.baseUrl}/docs; ` +
      `demo app at ${config.baseUrl}/demo (${config.demoSignIn ? 'development sign-in ON: SERVICE_DEMO' : 'pasted tokens'})\n`,
  );

  let closing = false;
  const draining = app.get(Draining);
  // Readiness drops at once and the instance still serves for the delay (load balancers stop sending it
  // work); then it takes no more (sockets are told to reconnect elsewhere) and answers what it has taken,
  // and only then closes, so nothing in flight meets a stopped publisher, Redis or database pool.
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`${signal}: shutting down\n`);
    draining.begin();
    await new Promise((r) => setTimeout(r, config.SERVICE_SHUTDOWN_DELAY_SECONDS * 1000));
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    await draining.stopIntake(app.getHttpServer());
    await app.close();
    await flushTracing();
    process.exit(0);
  };
  // the only signal handlers (createApp does not enable Nest's): one app.close(), a deadline, a clean exit code
  const onSignal = (signal: string) => () => {
    shutdown(signal).catch((err: unknown) => {
      process.stderr.write(`shutdown failed: ${String(err)}\n`);
      process.exit(1);
    });
  };
  process.once('SIGTERM', onSignal('SIGTERM'));
  process.once('SIGINT', onSignal('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `chat-service failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
