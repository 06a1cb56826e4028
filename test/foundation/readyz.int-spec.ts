import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';

/** Issue 11, finding 2: a pool drained by busy requests is overload, not a database that is down. */
describe('/readyz with the pool drained (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers 200 with the database up while every pooled connection is busy', async () => {
    const db = t.app.get(DataSource);
    const marker = `hold-${Date.now()}`;
    // more than the pool holds (20): every connection busy, and requests queued behind them
    const held = Array.from({ length: 24 }, () =>
      db.query(`SELECT pg_sleep(30) AS "${marker}"`).catch(() => 'cancelled'),
    );
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      for (;;) {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active'`,
          [`%${marker}%`],
        );
        if (rows[0]!.n >= 20) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await t.http().get('/readyz');
      expect([res.status, res.body.checks?.database]).toEqual([200, 'up']);
    } finally {
      await admin.query(
        `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`,
        [`%${marker}%`],
      );
      await admin.end();
      await Promise.all(held);
    }
  });
});
