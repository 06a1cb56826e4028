/**
 * @chat-service/client through a forced Redis restart (PostgreSQL + Redis; Redis of this test's own,
 * killed and started again empty). Two instances share the database and that Redis: the sender's client
 * talks to one, the reader's to the other, so every live event the reader gets crossed Redis. While one
 * user keeps sending, the other's client gets every acknowledged message exactly once, in order, and no
 * send is stored twice although sends were retried.
 */
import { randomBytes } from 'crypto';
import { ChatClient } from '../../packages/client/src';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { PrivateRedis } from '../support/private-redis';
import { expectAllReceived, recordedClient, sleep, until } from './support';

describe('@chat-service/client through a Redis restart', () => {
  let redis: PrivateRedis;
  let db: { url: string; drop: () => Promise<void> };
  let t: TestApp;
  let other: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser;
  let channel: { id: string };
  const open: ChatClient[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    db = await cloneDatabase();
    const env = {
      REDIS_URL: redis.url,
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    const shared = { databaseUrl: db.url, redisPrefix: `client-redis-${Date.now().toString(36)}:` };
    t = await startTestApp(env, shared);
    other = await startTestApp(env, shared);
    ws = await newWorkspace(t);
    [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    channel = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'team',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
  });
  afterAll(async () => {
    for (const c of open) c.disconnect();
    await t?.close();
    await other?.close().catch(() => undefined);
    await db?.drop();
    await redis?.kill();
  });

  const redisUp = async () => {
    for (const app of [t, other]) {
      const r = await app.http().get('/readyz');
      if (r.status !== 200 || r.body?.checks?.redis !== 'up') return false;
    }
    return true;
  };

  it('misses no message and repeats none while Redis is killed and started again', async () => {
    const reader = recordedClient(other, ws, bo);
    const sending = recordedClient(t, ws, ana, { sendRetry: { timeoutMs: 120_000, maxDelayMs: 1_000 } });
    open.push(reader.client, sending.client);
    await reader.client.connect();
    expect(await redisUp()).toBe(true);

    const sent: string[] = [];
    let more = true;
    const sends = (async () => {
      for (let i = 0; more; i++) {
        sent.push((await sending.client.sendMessage('team', { content: `r${i}` })).id);
        await sleep(20);
      }
    })();
    try {
      await until('messages before the outage', () => sent.length >= 10);
      await redis.kill();
      await until('the service notices', async () => !(await redisUp()));
      await sleep(3_000);
      await redis.start();
      await until('the service is ready with Redis again', redisUp, 60_000);
      const back = sent.length;
      await until('messages after the outage', () => sent.length >= back + 10, 60_000);
    } finally {
      more = false;
      await sends;
    }

    await expectAllReceived(reader.events, channel.id, sent, 60_000);
    // retried sends were stored once: history holds exactly the acknowledged messages
    const stored: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await sending.client.listMessages('team', { limit: 100, ...(before ? { before } : {}) });
      stored.push(...page.messages.map((m) => m.id));
      if (!page.has_more) break;
      before = page.next_cursor!;
    }
    expect(stored.reverse()).toEqual(sent);
  });
});
