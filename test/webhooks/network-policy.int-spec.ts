import { randomBytes } from 'crypto';
import { cloneDatabase } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { createWebhook, poll } from './helpers';

/**
 * Instances with different SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS share one database: a webhook to a
 * private address accepted by the permissive one is delivered by the strict one's worker too (the
 * policy is the one it was registered under), while the strict one still refuses to register one.
 */
describe('webhook network policy across instances (PostgreSQL + Redis)', () => {
  let permissive: TestApp;
  let strict: TestApp;
  let drop: () => Promise<void>;
  let receiver: Receiver;

  beforeAll(async () => {
    const db = await cloneDatabase();
    drop = db.drop;
    const shared = { databaseUrl: db.url, redisPrefix: `np${randomBytes(3).toString('hex')}:` };
    const key = randomBytes(32).toString('base64');
    // the permissive instance only serves the API: every delivery is attempted by the strict worker
    permissive = await startTestApp(
      { SERVICE_ENCRYPTION_KEY: key, SERVICE_ROLE: 'api', SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      shared,
    );
    strict = await startTestApp(
      { SERVICE_ENCRYPTION_KEY: key, SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' },
      shared,
    );
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await strict.close();
    await permissive.close();
    await receiver.close();
    await drop();
  });

  it('delivers under the policy the webhook was registered with', async () => {
    const ws = await newWorkspace(permissive);
    const url = receiver.url(200);
    await createWebhook(ws, url, ['user.created']);
    await ws.api.put('/v1/users/ana', { name: 'Ana' });
    const got = await poll(
      async () => (receiver.received(url).length ? receiver.received(url) : null),
      'the delivery',
    );
    expect(got).toHaveLength(1);

    const strictWs = await newWorkspace(strict);
    const refused = await strictWs.api.post('/v1/webhooks', {
      url: receiver.url(200),
      events: ['user.created'],
    });
    expect(refused.status).toBe(400);
  });
});
