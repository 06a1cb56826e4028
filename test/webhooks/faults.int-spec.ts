import { ChildProcess, spawn } from 'child_process';
import { join } from 'path';
import { Client as PgClient } from 'pg';
import { newId } from '../../src/common/ids';
import { startTestApp, TestApp } from '../support/app';
import { PrivateRedis } from '../support/private-redis';
import { Client, newWorkspace } from '../support/fixtures';
import { Receiver, ReceivedRequest } from '../support/receiver';
import { createWebhook, listDeliveries, poll, provision, sleep, waitDeliveries } from './helpers';

// Integration only (real PostgreSQL + Redis): faults that only exist with separate processes.

async function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once('exit', r));
}

const distinctOk = (reqs: ReceivedRequest[]) =>
  new Set(
    reqs
      .filter((r) => r.answeredAt !== undefined && (r.status ?? 0) < 300)
      .map((r) => r.json.event_id as string),
  );

describe('webhook delivery faults (PostgreSQL + Redis)', () => {
  it('never skips an event whose transaction commits late, even with newer transactions still open', async () => {
    const rx = await Receiver.start();
    const t = await startTestApp();
    const slow = new PgClient({ connectionString: t.env.DATABASE_URL });
    const newer = new PgClient({ connectionString: t.env.DATABASE_URL });
    const newest = new PgClient({ connectionString: t.env.DATABASE_URL });
    await Promise.all([slow.connect(), newer.connect(), newest.connect()]);
    try {
      const ws = await newWorkspace(t);
      const url = rx.url(200);
      await createWebhook(ws, url, ['user.created']);
      // T1 writes an event and stays open
      await slow.query('BEGIN');
      await slow.query(
        `INSERT INTO events (id, workspace_id, type, payload) VALUES ($1, $2, 'user.created', $3)`,
        [newId(), ws.id, { user: { id: newId(), external_id: 'late', name: 'Late' } }],
      );
      // a later transaction commits an event, and two newer ones take ids and stay open (the second
      // id is above the xmax of a reader's snapshot, which must not lift the bound past T1)
      await provision(ws, 'early');
      for (const c of [newer, newest]) {
        await c.query('BEGIN');
        await c.query('SELECT pg_current_xact_id()');
      }
      await sleep(800);
      expect(rx.received(url).map((r) => r.json.data.user.external_id)).toEqual([]); // held behind T1
      await slow.query('COMMIT');
      await rx.waitFor(url, { count: 2 });
      expect(
        rx
          .received(url)
          .map((r) => r.json.data.user.external_id)
          .sort(),
      ).toEqual(['early', 'late']);
    } finally {
      for (const c of [slow, newer, newest]) {
        await c.query('ROLLBACK').catch(() => undefined);
        await c.end();
      }
      await t.close();
      await rx.close();
    }
  });

  it('delivers every event exactly once per webhook across a Redis crash', async () => {
    const redis = await PrivateRedis.start();
    const rx = await Receiver.start();
    const t = await startTestApp({
      REDIS_URL: redis.url,
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1',
      SERVICE_WEBHOOK_RETRY_JITTER: '0',
    });
    try {
      const ws = await newWorkspace(t);
      // A fails the first attempt of every event, so retries sit delayed in Redis when it dies
      const firstSeen = new Set<string>();
      const flaky = rx.url((r) => {
        const id = r.json.event_id as string;
        if (firstSeen.has(id)) return 200;
        firstSeen.add(id);
        return 500;
      });
      const steady = rx.url(200);
      const a = await createWebhook(ws, flaky, ['user.created']);
      const b = await createWebhook(ws, steady, ['user.created']);

      for (let i = 0; i < 5; i++) await provision(ws, `before-${i}`);
      await rx.waitFor(flaky, { count: 5 }); // first (failed) attempts made, retries scheduled in Redis
      await redis.kill();
      for (let i = 0; i < 10; i++) await provision(ws, `during-${i}`); // the API keeps working: events are rows first
      await sleep(1500);
      await redis.start(); // empty: the delayed retries and anything queued are gone

      for (const url of [flaky, steady]) {
        await poll(
          async () => distinctOk(rx.received(url)).size === 15,
          `15 distinct events acknowledged on ${url}`,
          60_000,
          250,
        );
      }
      for (const wh of [a, b]) {
        const list = await waitDeliveries(
          ws,
          wh.id,
          (l) => l.length === 15 && l.every((d) => d.status === 'succeeded'),
          'all succeeded',
          20_000,
        );
        expect(new Set(list.map((d) => d.event_id)).size).toBe(15);
      }
      const received = [...distinctOk(rx.received(steady))].sort();
      expect(received).toEqual([...distinctOk(rx.received(flaky))].sort());
    } finally {
      await t.close();
      await rx.close();
      await redis.kill();
    }
  }, 120_000);

  it('a delivery whose worker is killed mid-attempt is completed by another worker', async () => {
    const rx = await Receiver.start();
    // this app only serves the API; the worker is a separate process we can kill
    const api = await startTestApp({ SERVICE_ROLE: 'api' });
    const prefix = process.env.SERVICE_REDIS_PREFIX!;
    let worker: ChildProcess | null = null;
    let second: TestApp | null = null;
    try {
      const env = {
        ...process.env,
        ...api.env,
        SERVICE_ROLE: 'worker',
        PORT: '0',
        SERVICE_REDIS_PREFIX: prefix,
        SERVICE_WEBHOOK_TIMEOUT_MS: '2000',
        TS_NODE_TRANSPILE_ONLY: 'true',
        NODE_OPTIONS: '',
      };
      worker = spawn(process.execPath, ['-r', 'ts-node/register', join(__dirname, '../../src/main.ts')], {
        env,
        stdio: 'ignore',
      });

      let calls = 0;
      const url = rx.url(() => (++calls === 1 ? { status: 200, delayMs: 60_000 } : 200)); // the first attempt hangs
      const ws = await newWorkspace(api);
      const wh = await createWebhook(ws, url, ['user.created']);
      await provision(ws, 'ana');
      await rx.waitFor(url, { timeoutMs: 60_000 }); // the worker process booted and is mid-attempt
      worker.kill('SIGKILL');
      await waitExit(worker);
      worker = null;
      const [pending] = await listDeliveries(ws, wh.id);
      expect(pending).toMatchObject({ status: 'pending', attempts: 0 });

      second = await startTestApp(
        {
          SERVICE_ROLE: 'worker',
          SERVICE_WEBHOOK_TIMEOUT_MS: '2000',
          SERVICE_ENCRYPTION_KEY: api.env.SERVICE_ENCRYPTION_KEY!,
        },
        { databaseUrl: api.env.DATABASE_URL!, redisPrefix: prefix },
      );
      const [done] = await waitDeliveries(
        ws,
        wh.id,
        (l) => l[0]?.status === 'succeeded',
        'completed by the second worker',
        60_000,
      );
      expect(done).toMatchObject({ attempts: 1, response_status: 200 });
      const reqs = rx.received(url);
      expect(reqs.length).toBe(2); // the receiver saw the event twice (allowed) with one event_id
      expect(new Set(reqs.map((r) => r.json.event_id)).size).toBe(1);
    } finally {
      if (worker) {
        worker.kill('SIGKILL');
        await waitExit(worker);
      }
      if (second) await second.app.close();
      await api.close();
      await rx.close();
    }
  }, 150_000);

  it('on shutdown an attempt in flight finishes and is recorded', async () => {
    const rx = await Receiver.start();
    const first = await startTestApp();
    const prefix = process.env.SERVICE_REDIS_PREFIX!;
    let second: TestApp | null = null;
    try {
      const url = rx.url(() => ({ status: 200, delayMs: 1500 }));
      const ws = await newWorkspace(first);
      const wh = await createWebhook(ws, url, ['user.created']);
      await provision(ws, 'ana');
      const [req] = await rx.waitFor(url);
      const started = Date.now();
      await first.app.close(); // SIGTERM path: waits for the attempt
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(req!.answeredAt).toBeDefined();
      second = await startTestApp(
        { SERVICE_ROLE: 'api', SERVICE_ENCRYPTION_KEY: first.env.SERVICE_ENCRYPTION_KEY! },
        { databaseUrl: first.env.DATABASE_URL!, redisPrefix: prefix },
      );
      const [d] = await listDeliveries({ ...ws, api: new Client(second, ws.api.authorization) }, wh.id);
      expect(d).toMatchObject({ status: 'succeeded', attempts: 1, response_status: 200 });
    } finally {
      if (second) await second.app.close();
      await first.close().catch(() => undefined);
      await rx.close();
    }
  }, 60_000);
});
