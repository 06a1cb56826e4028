import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/config.schema';
import { Metrics } from './ops/metrics';
import { unhandledRejectionHandler } from './ops/unhandled-rejections';

const SHUTDOWN_DEADLINE_MS = 9_500;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  const started = Date.now();
  // before anything starts: a rejection nobody handled is logged and counted, never the end of the process
  const counting: { metrics?: Metrics } = {};
  process.on('unhandledRejection', unhandledRejectionHandler(new Logger('Process'), () => counting.metrics));
  const app = await createApp(config);
  counting.metrics = app.get(Metrics);
  await app.listen(config.PORT);
  process.stdout.write(
    `chat-service (${config.SERVICE_ROLE}) listening on ${config.baseUrl} in ${Date.now() - started} ms ` +
      `[${config.embedded ? `embedded database in ${config.SERVICE_DATA_DIR}` : 'PostgreSQL'}, ` +
      `${config.REDIS_URL ? 'Redis' : 'in-process adapters'}]; API docs at ${config.baseUrl}/docs\n`,
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`${signal}: shutting down\n`);
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    app
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      });
  };
  // the only signal handlers (createApp does not enable Nest's): one app.close(), a deadline, a clean exit code
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`chat-service failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
