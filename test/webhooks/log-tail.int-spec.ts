import { Client as PgClient } from 'pg';
import { DataSource } from 'typeorm';
import { validate, version } from 'uuid';
import { SETTLED_BOUND_IN_STATEMENT } from '../../src/events/event-log.reader';
import { ADMIN_DATABASE_URL } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { createWebhook, provision } from './helpers';

// Integration only (real PostgreSQL, concurrent sessions): the shared log pass (src/events/log-tail.ts).

describe('the log followers’ pass (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('the in-statement bound stops at a running writer of this database, not at one of another database', async () => {
    const db = t.app.get(DataSource);
    const bound = async () =>
      BigInt((await db.query(`SELECT ${SETTLED_BOUND_IN_STATEMENT}::text AS b`))[0].b);
    const elsewhere = new PgClient({ connectionString: ADMIN_DATABASE_URL });
    const here = new PgClient({ connectionString: t.env.DATABASE_URL });
    await Promise.all([elsewhere.connect(), here.connect()]);
    try {
      // another database's transaction takes the lower id, this database's the next one
      await elsewhere.query('BEGIN');
      const other = BigInt((await elsewhere.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x);
      await here.query('BEGIN');
      const mine = BigInt((await here.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x);
      expect(other < mine).toBe(true);
      // later transactions end, so both running ids are inside the snapshot's in-progress list
      for (let i = 0; i < 3; i++) await db.query('SELECT pg_current_xact_id()');
      expect(await bound()).toBe(mine);
      await here.query('COMMIT');
      // the other database's transaction still runs and does not hold the bound back
      expect((await bound()) > mine).toBe(true);
    } finally {
      await elsewhere.query('ROLLBACK').catch(() => undefined);
      await here.query('ROLLBACK').catch(() => undefined);
      await Promise.all([elsewhere.end(), here.end()]);
    }
  });

  it('makes deliveries with UUIDv7 ids in event order, one per (webhook, event)', async () => {
    const rx = await Receiver.start();
    try {
      const ws = await newWorkspace(t);
      const a = await createWebhook(ws, rx.url(200), ['user.created']);
      const b = await createWebhook(ws, rx.url(200), ['user.created']);
      for (let i = 0; i < 6; i++) await provision(ws, `u${i}`);
      const db = t.app.get(DataSource);
      let rows: { id: string; webhook_id: string; tx_id: string; position: number }[] = [];
      const deadline = Date.now() + 15_000;
      while (rows.length < 12 && Date.now() < deadline) {
        rows = await db.query(
          `SELECT d.id, d.webhook_id, e.tx_id::text AS tx_id, e.position FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE d.workspace_id = $1 ORDER BY d.id`,
          [ws.id],
        );
        if (rows.length < 12) await new Promise((r) => setTimeout(r, 100));
      }
      expect(rows).toHaveLength(12);
      for (const r of rows) expect(validate(r.id) && version(r.id)).toBe(7);
      for (const w of [a.id, b.id]) {
        const mine = rows.filter((r) => r.webhook_id === w);
        const inLogOrder = [...mine].sort((x, y) =>
          BigInt(x.tx_id) === BigInt(y.tx_id)
            ? x.position - y.position
            : BigInt(x.tx_id) < BigInt(y.tx_id)
              ? -1
              : 1,
        );
        expect(mine.map((r) => r.id)).toEqual(inLogOrder.map((r) => r.id));
      }
    } finally {
      await rx.close();
    }
  });
  it('keeps following the log after the connection its passes run on is terminated', async () => {
    const rx = await Receiver.start();
    try {
      const ws = await newWorkspace(t);
      await createWebhook(ws, rx.url(200), ['user.created']);
      const db = t.app.get(DataSource);
      const deliveries = async (n: number) => {
        const deadline = Date.now() + 15_000;
        let count = 0;
        while (Date.now() < deadline) {
          count = Number(
            (
              await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE workspace_id = $1`, [
                ws.id,
              ])
            )[0].n,
          );
          if (count >= n) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        return count;
      };
      await provision(ws, 'before');
      expect(await deliveries(1)).toBe(1);
      // the passes keep one connection between them: end it as a restart or a network cut would
      const killed: unknown[] = await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '/* log-follower */%'`,
      );
      expect(killed.length).toBeGreaterThanOrEqual(1);
      await provision(ws, 'after');
      expect(await deliveries(2)).toBe(2);
    } finally {
      await rx.close();
    }
  });
});
