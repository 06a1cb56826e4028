import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { AddressInfo } from 'net';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/config.schema';
import { cloneDatabase, isIntegration, REDIS_URL } from './databases';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  app: NestExpressApplication;
  /** supertest against the real listening HTTP server */
  http: () => request.Agent;
  baseUrl: string;
  env: Record<string, string>;
  close: () => Promise<void>;
}

/**
 * Starts the real application on an ephemeral port: in-memory PGlite on `npm test`, a database cloned
 * from the migrated template plus real Redis on `npm run test:integration`.
 */
export async function startTestApp(
  overrides: Record<string, string> = {},
  shared?: { databaseUrl: string; redisPrefix: string },
): Promise<TestApp> {
  let drop: (() => Promise<void>) | undefined;
  const env: Record<string, string> = {
    SERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // the suites fire bursts of parallel requests of one workspace on a busy machine: the admission
    // limits (issue 29) are tested where they are the subject (test/admission, the fault suite)
    SERVICE_WORKSPACE_CONCURRENT_REQUESTS: '10000',
    SERVICE_WORKSPACE_REQUESTS_PER_SECOND: '1000000',
    SERVICE_MAX_REQUESTS_IN_FLIGHT: '0',
    SERVICE_MAX_EVENT_LOOP_DELAY_MS: '0',
    // and a burst of transactions waiting for one channel's lock may keep the pool's connections busy
    // for over the default 1 s a request waits for one (then 503): seen on a loaded CI machine
    DATABASE_POOL_WAIT_MS: '60000',
    ...overrides,
  };
  if (isIntegration()) {
    if (shared) {
      env.DATABASE_URL = shared.databaseUrl;
      env.SERVICE_REDIS_PREFIX = shared.redisPrefix;
    } else {
      const db = await cloneDatabase();
      drop = db.drop;
      env.DATABASE_URL = db.url;
      env.SERVICE_REDIS_PREFIX = overrides.SERVICE_REDIS_PREFIX ?? `t${randomBytes(4).toString('hex')}:`;
    }
    // the app reads it from its config; tests that look at Redis themselves read it here
    process.env.SERVICE_REDIS_PREFIX = env.SERVICE_REDIS_PREFIX;
    // files (attachments, exports) in a directory of this app's own: test files run in parallel
    if (!env.SERVICE_DATA_DIR) {
      const dir = mkdtempSync(join(tmpdir(), 'chat-test-data-'));
      env.SERVICE_DATA_DIR = dir;
      const dropDb = drop;
      drop = async () => {
        rmSync(dir, { recursive: true, force: true });
        if (dropDb) await dropDb();
      };
    }
    env.REDIS_URL = overrides.REDIS_URL ?? REDIS_URL; // a test may bring its own Redis (fault tests stop it)
    env.SERVICE_ENCRYPTION_KEY = env.SERVICE_ENCRYPTION_KEY ?? randomBytes(32).toString('base64');
  } else {
    // a copy of the migrated database npm test's global setup dumped (test/support/embedded-template.ts)
    env.SERVICE_DATA_DIR = env.SERVICE_DATA_DIR ?? `memory://${process.env.CHAT_TEST_PGLITE_TEMPLATE ?? ''}`;
  }
  const config = loadConfig(env);
  const app = await createApp(config, { logs: env.LOG_LEVEL !== 'silent' });
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  // the base URL is only known after listen; attachments and docs read it from the config
  config.baseUrl = baseUrl;
  if (!env.SERVICE_S3_PUBLIC_URL) config.publicFilesUrl = `${baseUrl}/files/`;
  return {
    app,
    env,
    baseUrl,
    http: () => request.agent(app.getHttpServer()),
    close: async () => {
      await app.close();
      if (drop) await drop();
    },
  };
}

/**
 * Two instances of the application on one cloned PostgreSQL database and one Redis (under their own key
 * prefix), as a multi-instance deployment runs them. `close` stops both and drops the database.
 */
export async function startTwoInstances(
  prefix: string,
  extraEnv: Record<string, string> = {},
): Promise<{ one: TestApp; two: TestApp; close: () => Promise<void> }> {
  const db = await cloneDatabase();
  const shared = { databaseUrl: db.url, redisPrefix: `${prefix}${Date.now().toString(36)}:` };
  const env = { SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'), ...extraEnv };
  const one = await startTestApp(env, shared);
  const two = await startTestApp(env, shared);
  return {
    one,
    two,
    close: async () => {
      await one.close();
      await two.close().catch(() => undefined);
      await db.drop();
    },
  };
}
