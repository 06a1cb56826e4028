import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { startTestApp, TestApp } from '../support/app';
import { cloneDatabase } from '../support/databases';
import { newWorkspace, TestWorkspace } from '../support/fixtures';
import { group } from '../messages/helpers';
import { poll } from '../webhooks/helpers';

const BATCH = 100;
const TOTAL = 1200;

/**
 * CONTRACT §20 on PostgreSQL + Redis: an API instance answers 202 and a worker instance carries the
 * `user.erase` job out through BullMQ; a batch that fails mid-way (a real database error, raised by a
 * trigger on one message) rolls back alone, and the job's retry resumes from the last committed batch
 * without announcing any message twice.
 */
describe('erasure jobs on an API and a worker instance', () => {
  let api: TestApp;
  let worker: TestApp | null = null;
  let pg: Client;
  let drop: () => Promise<void>;
  const shared = { databaseUrl: '', redisPrefix: `erase${Date.now().toString(36)}:` };
  const env = {
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SERVICE_ERASURE_BATCH_SIZE: String(BATCH),
  };

  beforeAll(async () => {
    const db = await cloneDatabase();
    drop = db.drop;
    shared.databaseUrl = db.url;
    api = await startTestApp({ ...env, SERVICE_ROLE: 'api' }, shared);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg.end();
    await worker?.close();
    await api.close();
    await drop();
  });

  /** TOTAL messages by bo in one channel (oldest first), every tenth of them unsent already. */
  async function setup(): Promise<{
    ws: TestWorkspace;
    channelId: string;
    userId: string;
    ids: string[];
    unsent: Set<string>;
  }> {
    const ws = await newWorkspace(api);
    const [, bo] = await ws.users('ana', 'bo');
    const ch = await group(ws, 'ana', ['bo']);
    const { rows } = await pg.query<{ id: string; deleted: boolean }>(
      `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at, deleted_at)
       SELECT gen_random_uuid(), $1, $2, $3::uuid, $4::text, 'text', CASE WHEN g % 10 = 0 THEN '' ELSE 'm ' || g END,
              now() - interval '1 hour' + make_interval(secs => g / 1000.0),
              CASE WHEN g % 10 = 0 THEN now() END
         FROM generate_series(1, $5) g
       RETURNING id, deleted_at IS NOT NULL AS deleted`,
      [ws.id, ch.id, bo!.id, bo!.id, TOTAL],
    );
    const ordered = await pg.query<{ id: string }>(
      `SELECT id FROM messages WHERE channel_id = $1 ORDER BY created_at DESC`,
      [ch.id],
    );
    return {
      ws,
      channelId: ch.id,
      userId: bo!.id,
      ids: ordered.rows.map((r) => r.id),
      unsent: new Set(rows.filter((r) => r.deleted).map((r) => r.id)),
    };
  }

  async function erasure(ws: TestWorkspace, jobId: string) {
    const res = await ws.api.get(`/v1/erasures/${jobId}`);
    expect(res.status).toBe(200);
    return res.body as { status: string; messages_done: number };
  }

  async function deletedEvents(channelId: string): Promise<{ id: string; removed: boolean }[]> {
    const { rows } = await pg.query<{ id: string; removed: boolean }>(
      `SELECT payload->'message'->>'id' AS id, coalesce((payload->'message'->>'removed')::boolean, false) AS removed
         FROM events WHERE channel_id = $1 AND type = 'message.deleted'`,
      [channelId],
    );
    return rows;
  }

  it('an API instance answers 202; the job waits in Redis until a worker instance runs it', async () => {
    const s = await setup();
    const res = await s.ws.api.delete('/v1/users/bo?messages=keep');
    expect(res.status).toBe(202);
    const jobId = res.body.job_id as string;
    expect((await s.ws.api.get('/v1/users/bo')).status).toBe(404);
    await new Promise((r) => setTimeout(r, 500));
    expect(await erasure(s.ws, jobId)).toMatchObject({ status: 'pending', messages_done: 0 }); // no worker yet

    worker = await startTestApp({ ...env, SERVICE_ROLE: 'worker' }, shared);
    await poll(async () => (await erasure(s.ws, jobId)).status === 'done', 'the erasure job', 60_000, 200);
    expect(await erasure(s.ws, jobId)).toMatchObject({ messages_done: TOTAL });
    const { rows } = await pg.query(
      `SELECT count(*)::int AS n FROM messages WHERE channel_id = $1 AND user_id IS NULL`,
      [s.channelId],
    );
    expect(rows[0].n).toBe(TOTAL);
    expect((await pg.query(`SELECT 1 FROM users WHERE id = $1`, [s.userId])).rowCount).toBe(0);
  });

  it.each(['anonymize', 'delete'])(
    'messages=%s: a batch failing mid-way rolls back alone; the retry resumes and announces no message twice',
    async (mode) => {
      if (!worker) worker = await startTestApp({ ...env, SERVICE_ROLE: 'worker' }, shared);
      const s = await setup();
      // the batch holding the 650th newest message fails (batches before it commit: 6 of 100)
      const victim = s.ids[649]!;
      const fn = `erasure_test_fail_${randomBytes(3).toString('hex')}`;
      await pg.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'simulated failure in the middle of an erasure'; END $$`);
      await pg.query(`CREATE TRIGGER ${fn} BEFORE UPDATE OR DELETE ON messages FOR EACH ROW
        WHEN (OLD.id = '${victim}'::uuid) EXECUTE FUNCTION ${fn}()`);
      try {
        const res = await s.ws.api.delete(`/v1/users/bo?messages=${mode}`);
        expect(res.status).toBe(202);
        const jobId = res.body.job_id as string;
        const failed = await poll(
          async () => {
            const { rows } = await pg.query(
              `SELECT attempts, last_error, messages_done::int AS done FROM user_erasures WHERE id = $1`,
              [jobId],
            );
            return rows[0].attempts > 0 ? rows[0] : null;
          },
          'the failed batch',
          30_000,
          50,
        );
        expect(failed.last_error).toMatch(/simulated failure/);
        // mid-way: the batches before the failing one committed, with their events; the failing one left nothing
        expect(failed.done).toBe(6 * BATCH);
        const early = await deletedEvents(s.channelId);
        const touched = s.ids.slice(0, 6 * BATCH);
        const live = (ids: string[]) => ids.filter((id) => !s.unsent.has(id));
        expect(early.map((e) => e.id).sort()).toEqual(
          (mode === 'anonymize' ? live(touched) : touched).sort(),
        );

        await pg.query(`DROP TRIGGER ${fn} ON messages`);
        await poll(
          async () => (await erasure(s.ws, jobId)).status === 'done',
          'the resumed job',
          60_000,
          200,
        );
        expect(await erasure(s.ws, jobId)).toMatchObject({ messages_done: TOTAL });

        const events = await deletedEvents(s.channelId);
        const ids = events.map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length); // none twice
        expect([...ids].sort()).toEqual((mode === 'anonymize' ? live(s.ids) : s.ids).sort());
        expect(events.every((e) => e.removed === (mode === 'delete'))).toBe(true);
        const { rows } = await pg.query<{ n: number; blank: number }>(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE content = '' AND deleted_at IS NOT NULL AND user_id IS NULL)::int AS blank
             FROM messages WHERE channel_id = $1`,
          [s.channelId],
        );
        expect(rows[0]).toEqual(mode === 'anonymize' ? { n: TOTAL, blank: TOTAL } : { n: 0, blank: 0 });
        expect((await pg.query(`SELECT 1 FROM users WHERE id = $1`, [s.userId])).rowCount).toBe(0);
      } finally {
        await pg.query(`DROP TRIGGER IF EXISTS ${fn} ON messages`);
        await pg.query(`DROP FUNCTION IF EXISTS ${fn}()`);
      }
    },
  );
});
