import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { Client, TestUser, userToken } from '../support/fixtures';
import { group, room, send } from '../messages/helpers';

interface Entry {
  id: string;
  status: string;
  flag_count: number;
  reasons: string[];
  message?: { id: string };
}

/** CONTRACT §19's one entry per target and one flag per reporter, under real concurrency (PostgreSQL). */
describe('flags under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function crowd(n: number) {
    const r = await room(t);
    const ids = Array.from({ length: n }, (_, i) => `u${i}`);
    const res = await r.ws.api.post('/v1/users', { users: ids.map((external_id) => ({ external_id })) });
    if (res.status !== 200) throw new Error(`setup: users answered ${res.status} ${res.text}`);
    const users: TestUser[] = (res.body as { users: { id: string; external_id: string }[] }).users.map(
      (u) => {
        const token = userToken(r.ws.apiKey, r.ws.apiSecret, u.external_id);
        return { id: u.id, external_id: u.external_id, token, api: new Client(t, `Bearer ${token}`) };
      },
    );
    const ch = await group(r.ws, 'ana', ids);
    return { ...r, ch, users };
  }

  async function entries(ws: { api: Client }, status = 'open'): Promise<Entry[]> {
    const res = await ws.api.get(`/v1/moderation/flags?status=${status}&limit=100`);
    if (res.status !== 200) throw new Error(`queue answered ${res.status} ${res.text}`);
    return (res.body as { flags: Entry[] }).flags;
  }

  const count = async (sql: string, params: unknown[]): Promise<number> => {
    const found: { n: number }[] = await t.app.get(DataSource).query(sql, params);
    return found[0]!.n;
  };

  it('60 users flagging one message at once make one entry with flag_count 60 and every reason', async () => {
    const { ws, ana, ch, users } = await crowd(60);
    const m = await send(ana, ch.id, 'viral');
    const answers = await Promise.all(
      users.map((u, i) => u.api.post(`/v1/messages/${m.id}/flag`, { reason: `r${i % 7}` })),
    );
    expect(answers.map((r) => r.status)).toEqual(users.map(() => 201));
    const [entry, ...rest] = await entries(ws);
    expect(rest).toEqual([]);
    expect([entry!.message?.id, entry!.flag_count]).toEqual([m.id, 60]);
    expect([...entry!.reasons].sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    expect(await count(`SELECT count(*)::int AS n FROM flags WHERE review_id = $1`, [entry!.id])).toBe(60);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'message.flagged'`,
        [ws.id],
      ),
    ).toBe(60);
  });

  it('one reporter flagging one target 10 times at once: one 201, nine 200 with the same flag, a count of 1', async () => {
    const { ws, ana, bo, ch } = await room(t);
    const m = await send(ana, ch.id, 'once');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => bo.api.post(`/v1/messages/${m.id}/flag`, { reason: `try ${i}` })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((r) => (r.body as { id: string }).id)).size).toBe(1);
    const userAnswers = await Promise.all(
      Array.from({ length: 10 }, () => bo.api.post('/v1/users/ana/flag', {})),
    );
    expect(userAnswers.filter((r) => r.status === 201)).toHaveLength(1);
    expect((await entries(ws)).map((e) => e.flag_count)).toEqual([1, 1]);
    expect(
      await count(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type LIKE '%.flagged'`, [
        ws.id,
      ]),
    ).toBe(2);
  });

  it('flags racing a resolution: each flag lands in exactly one entry, at most one entry is open, counts add up', async () => {
    const { ws, ana, ch, users } = await crowd(40);
    const m = await send(ana, ch.id, 'contested');
    expect((await users[0]!.api.post(`/v1/messages/${m.id}/flag`, {})).status).toBe(201);
    const [first] = await entries(ws);
    const [answers, resolved] = await Promise.all([
      Promise.all(users.slice(1).map((u) => u.api.post(`/v1/messages/${m.id}/flag`, {}))),
      ws.api.post(`/v1/moderation/flags/${first!.id}/resolve`, { action: 'dismiss' }),
    ]);
    expect(answers.map((r) => r.status)).toEqual(users.slice(1).map(() => 201));
    expect(resolved.status).toBe(200);
    const open = await entries(ws);
    const done = await entries(ws, 'resolved');
    expect(open.length).toBeLessThanOrEqual(1);
    expect(done.map((e) => e.id)).toEqual([first!.id]);
    expect([...open, ...done].reduce((n, e) => n + e.flag_count, 0)).toBe(40);
    // the stored counts are the flags each entry holds
    for (const e of [...open, ...done])
      expect(await count(`SELECT count(*)::int AS n FROM flags WHERE review_id = $1`, [e.id])).toBe(
        e.flag_count,
      );
  });
});
