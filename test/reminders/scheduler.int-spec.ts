import { randomBytes } from 'crypto';
import { DataSource } from 'typeorm';
import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { sleep } from '../support/socket';

const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

/**
 * CONTRACT §25's one durable scheduler on PostgreSQL + Redis: reminders fire exactly once with two
 * workers taking them, and a reminder that fell due while no worker ran fires when one starts.
 */
describe('the scheduler across workers and restarts (PostgreSQL)', () => {
  let drop: () => Promise<void>;
  let shared: { databaseUrl: string; redisPrefix: string };
  let env: Record<string, string>;
  let api: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser;
  let ch: { id: string };
  const workers: TestApp[] = [];

  const worker = async () => {
    const w = await startTestApp({ ...env, SERVICE_ROLE: 'worker' }, shared);
    workers.push(w);
    return w;
  };
  const firedEvents = async () =>
    api.app.get(DataSource).query<{ id: string; n: number }[]>(
      `SELECT payload->'reminder'->>'id' AS id, count(*)::int AS n FROM events
        WHERE workspace_id = $1 AND type = 'notification.reminder_due' GROUP BY 1`,
      [ws.id],
    );

  beforeAll(async () => {
    const db = await cloneDatabase();
    drop = db.drop;
    shared = { databaseUrl: db.url, redisPrefix: `sch${Date.now().toString(36)}:` };
    env = {
      SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SERVICE_SCHEDULER_INTERVAL_MS: '200',
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
    };
    api = await startTestApp({ ...env, SERVICE_ROLE: 'api' }, shared);
    ws = await newWorkspace(api);
    [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo']);
  });
  afterAll(async () => {
    for (const w of workers) await w.close().catch(() => undefined);
    await api.close();
    await drop();
  });

  const remind = async (count: number, inMs: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const m = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: `m${i}` });
      expect(m.status).toBe(201);
      const r = await bo.api.post(`/v1/messages/${m.body.id}/reminder`, { remind_at: ahead(inMs) });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    return ids;
  };

  it('two workers fire 60 reminders due at once exactly once each', async () => {
    const [one, two] = [await worker(), await worker()];
    const ids = await remind(60, 1500);
    for (let waited = 0; waited < 15_000; waited += 250) {
      if ((await firedEvents()).filter((e) => ids.includes(e.id)).length === ids.length) break;
      await sleep(250);
    }
    await sleep(1000); // a second firing would have had its chance
    const fired = (await firedEvents()).filter((e) => ids.includes(e.id));
    expect(fired.map((e) => e.n)).toEqual(ids.map(() => 1));
    const due = await bo.api.get('/v1/me/reminders?filter=due&limit=100');
    expect(due.body.reminders).toHaveLength(60);
    await one.close();
    await two.close();
    workers.length = 0;
  });

  it('a reminder that fell due while no worker ran fires as soon as one starts, once', async () => {
    const w = await worker();
    const [id] = await remind(1, 2500);
    await w.close(); // stopped before the due time
    workers.length = 0;
    await sleep(3500);
    expect((await firedEvents()).filter((e) => e.id === id)).toEqual([]);
    const started = Date.now();
    await worker();
    for (;;) {
      if ((await firedEvents()).some((e) => e.id === id)) break;
      if (Date.now() - started > 10_000)
        throw new Error('the due reminder did not fire after the worker started');
      await sleep(100);
    }
    await sleep(1000);
    expect((await firedEvents()).filter((e) => e.id === id)).toEqual([{ id, n: 1 }]);
  });
});
