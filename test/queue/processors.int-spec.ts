import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { queuePrefix } from '../../src/infra/queue/queue.module';
import { RedisService } from '../../src/infra/redis/redis.module';
import { startTestApp, TestApp } from '../support/app';
import { REDIS_URL } from '../support/databases';

const JOBS = ['webhook.deliver', 'export.build', 'user.erase', 'push.message'] as const;

/**
 * The background jobs run as `@nestjs/bullmq` processors on Redis: a process that runs background
 * work (SERVICE_ROLE all or worker) has a live BullMQ worker per job name it consumes, an `api`
 * instance has none. Push consumes only with an FCM service account (none here).
 */
describe('BullMQ processors by role (issue 12)', () => {
  const apps: TestApp[] = [];
  let redis: Redis;
  afterAll(async () => {
    for (const a of apps) await a.close();
    await redis?.quit();
  });

  async function workersByJob(app: TestApp): Promise<Record<string, number>> {
    redis ??= new Redis(REDIS_URL);
    const prefix = queuePrefix(app.app.get(RedisService).prefix, app.env.DATABASE_URL);
    const out: Record<string, number> = {};
    for (const name of JOBS) {
      const q = new Queue(name, { connection: redis, prefix });
      out[name] = (await q.getWorkers()).length;
      await q.close();
    }
    return out;
  }

  /** The workers once they have settled (an unused one closes just after boot), within 10 s. */
  async function settled(app: TestApp, expected: Record<string, number>): Promise<Record<string, number>> {
    let seen = await workersByJob(app);
    for (let i = 0; i < 20 && JSON.stringify(seen) !== JSON.stringify(expected); i++) {
      await new Promise((r) => setTimeout(r, 500));
      seen = await workersByJob(app);
    }
    return seen;
  }

  it('SERVICE_ROLE=all consumes every configured job; api consumes none', async () => {
    const all = await startTestApp({ SERVICE_ROLE: 'all' });
    apps.push(all);
    const consumers = { 'webhook.deliver': 1, 'export.build': 1, 'user.erase': 1, 'push.message': 0 };
    expect(await settled(all, consumers)).toEqual(consumers);

    const api = await startTestApp({ SERVICE_ROLE: 'api' });
    apps.push(api);
    const none = { 'webhook.deliver': 0, 'export.build': 0, 'user.erase': 0, 'push.message': 0 };
    expect(await settled(api, none)).toEqual(none);
  });
});
