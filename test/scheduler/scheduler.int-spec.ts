import { randomBytes } from 'crypto';
import { DataSource } from 'typeorm';
import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { sleep } from '../support/socket';

const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

/**
 * CONTRACT §25's one durable scheduler on PostgreSQL + Redis: reminders and scheduled messages fire
 * exactly once with two workers taking them, and those that fell due while no worker ran fire when one
 * starts.
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
  /** Per scheduled message: its scheduled.sent events and the messages with its content. */
  const sentScheduled = async () =>
    api.app.get(DataSource).query<{ id: string; n: number; messages: number }[]>(
      `SELECT e.payload->>'scheduled_message_id' AS id, count(*)::int AS n,
              (SELECT count(*)::int FROM messages m WHERE m.workspace_id = $1 AND m.content = min(e.payload->'message'->>'content')) AS messages
         FROM events e WHERE e.workspace_id = $1 AND e.type = 'scheduled.sent' GROUP BY 1`,
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
  const schedule = async (count: number, inMs: number) => {
    const ids: string[] = [];
    const at = ahead(inMs);
    for (let i = 0; i < count; i++) {
      const s = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
        content: `later ${i} ${at}`,
        scheduled_at: at,
      });
      expect(s.status).toBe(202);
      ids.push(s.body.scheduled_message.id);
    }
    return ids;
  };

  it('two workers fire 60 reminders and send 60 scheduled messages due at once exactly once each', async () => {
    const [one, two] = [await worker(), await worker()];
    // far enough ahead that 120 requests on a loaded machine still schedule the last one in time
    const ids = await remind(60, 8000);
    const scheduled = await schedule(60, 8000);
    for (let waited = 0; waited < 25_000; waited += 250) {
      const done =
        (await firedEvents()).filter((e) => ids.includes(e.id)).length === ids.length &&
        (await sentScheduled()).filter((e) => scheduled.includes(e.id)).length === scheduled.length;
      if (done) break;
      await sleep(250);
    }
    await sleep(1000); // a second firing would have had its chance
    const fired = (await firedEvents()).filter((e) => ids.includes(e.id));
    expect(fired.map((e) => e.n)).toEqual(ids.map(() => 1));
    const sent = (await sentScheduled()).filter((e) => scheduled.includes(e.id));
    expect(sent.map((e) => [e.n, e.messages])).toEqual(scheduled.map(() => [1, 1]));
    expect((await bo.api.get('/v1/me/scheduled')).body.scheduled_messages).toEqual([]);
    const due = await bo.api.get('/v1/me/reminders?filter=due&limit=100');
    expect(due.body.reminders).toHaveLength(60);
    await one.close();
    await two.close();
    workers.length = 0;
  });

  it('a reminder and a scheduled message that fell due while no worker ran fire as soon as one starts, once', async () => {
    const w = await worker();
    const due = Date.now() + 5000;
    const [id] = await remind(1, 5000);
    const [sid] = await schedule(1, 5000);
    await w.close(); // stopped before the due time
    workers.length = 0;
    expect(Date.now()).toBeLessThan(due);
    await sleep(due - Date.now() + 1000);
    expect((await firedEvents()).filter((e) => e.id === id)).toEqual([]);
    expect((await sentScheduled()).filter((e) => e.id === sid)).toEqual([]);
    const started = Date.now();
    await worker();
    for (;;) {
      if ((await firedEvents()).some((e) => e.id === id) && (await sentScheduled()).some((e) => e.id === sid))
        break;
      if (Date.now() - started > 10_000)
        throw new Error('the due items did not fire after the worker started');
      await sleep(100);
    }
    await sleep(1000);
    expect((await firedEvents()).filter((e) => e.id === id)).toEqual([{ id, n: 1 }]);
    expect((await sentScheduled()).filter((e) => e.id === sid)).toEqual([{ id: sid, n: 1, messages: 1 }]);
  });

  it('20 concurrent schedulings at the cap take exactly the places left', async () => {
    await schedule(90, 3600e3);
    const at = ahead(3600e3);
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bo.api.post(`/v1/channels/${ch.id}/messages`, { content: `race ${i}`, scheduled_at: at }),
      ),
    );
    const statuses = all.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(10).fill(202), ...Array(10).fill(409)]);
    const listed = await bo.api.get('/v1/me/scheduled?limit=100');
    expect(listed.body.scheduled_messages).toHaveLength(100);
  });
});
