import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { eventsOf, history, Msg, room } from './helpers';

/** Races that only real PostgreSQL (many connections) can produce. */
describe('message concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '1000' });
  });
  afterAll(async () => t.close());

  it('20 parallel sends with one idempotency key store one row; every answer carries its id', async () => {
    const { ch, ana } = await room(t);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ana.api.post(`/v1/channels/${ch.id}/messages`, { content: `attempt ${i}`, idempotency_key: 'once' }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
    const ids = new Set(answers.map((r) => (r.body as Msg).id));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    const rows: { n: number }[] = await t.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM messages WHERE channel_id = $1`, [ch.id]);
    expect(rows[0]!.n).toBe(1);
    expect((await eventsOf(t, ch.id)).filter((e) => e.type === 'message.created')).toHaveLength(1);
  });

  it("sends racing with the sender's removal land before the member.left or are refused 403 NOT_A_MEMBER", async () => {
    const { ws, ch, bo } = await room(t);
    const sends = Array.from({ length: 20 }, (_, i) =>
      bo.api.post(`/v1/channels/${ch.id}/messages`, { content: `race ${i}` }),
    );
    const removal = ws.api.delete(`/v1/channels/${ch.id}/members/bo`);
    const answers = await Promise.all(sends);
    expect((await removal).status).toBe(204);
    for (const r of answers) {
      if (r.status !== 201) {
        expect(r.status).toBe(403);
        expect(r.body.error.code).toBe('NOT_A_MEMBER');
      }
    }
    const log = await eventsOf(t, ch.id);
    const left = log.find((e) => e.type === 'member.left')!;
    const created = log.filter((e) => e.type === 'message.created');
    expect(created).toHaveLength(answers.filter((r) => r.status === 201).length);
    for (const e of created) expect(e.seq!).toBeLessThan(left.seq!);
  });

  it('the same key raced across two channels still yields one message', async () => {
    const { ws, ch, ana } = await room(t);
    const other = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'race-2',
      created_by: 'ana',
    });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        ana.api.post(`/v1/channels/${i % 2 ? ch.id : other.body.id}/messages`, {
          content: 'x',
          idempotency_key: 'cross',
        }),
      ),
    );
    expect(new Set(answers.map((r) => (r.body as Msg).id)).size).toBe(1);
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
  });

  it('20 parallel reaction changes by one user leave one reaction and a consistent event sequence', async () => {
    const { ch, ana, bo } = await room(t);
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'race me' })).body as Msg;
    const emojis = ['👍', '🎉', '🔥', '❤️', '😂'];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: emojis[i % emojis.length] }),
      ),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const rows: { emoji: string }[] = await t.app
      .get(DataSource)
      .query(`SELECT emoji FROM reactions WHERE message_id = $1`, [m.id]);
    expect(rows).toHaveLength(1);
    const final = (await history(bo.api, ch.id)).messages[0]!;
    expect(final.reactions).toEqual([{ emoji: rows[0]!.emoji, count: 1, reacted_by_me: true }]);

    // replaying the log gives the stored state: every removal names the reaction in place, every addition follows one
    const events = (await eventsOf(t, ch.id)).filter((e) => e.type.startsWith('message.reaction.'));
    let current: string | null = null;
    for (const e of events) {
      const emoji = (e.payload.reaction as { emoji: string }).emoji;
      if (e.type === 'message.reaction.removed') {
        expect(emoji).toBe(current);
        current = null;
      } else {
        expect(current).toBeNull();
        current = emoji;
      }
    }
    expect(current).toBe(rows[0]!.emoji);
    const seqs = (await eventsOf(t, ch.id)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('200 parallel sends page cleanly through history: no duplicates, no gaps, strict order', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const users = [ana, bo, cy];
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        users[i % 3]!.api.post(`/v1/channels/${ch.id}/messages`, { content: `parallel ${i}` }),
      ),
    );
    expect(answers.every((r) => r.status === 201)).toBe(true);
    const sent = answers.map((r) => (r.body as Msg).id).sort();
    const seen: Msg[] = [];
    let before: string | undefined;
    do {
      const page = await history(bo.api, ch.id, before ? { limit: 17, before } : { limit: 17 });
      seen.push(...page.messages);
      before = page.next_cursor ?? undefined;
    } while (before);
    expect(seen.map((m) => m.id).sort()).toEqual(sent);
    // created_at follows commit order within the channel, and the order is strict by (created_at, id)
    const rows: { id: string }[] = await t.app
      .get(DataSource)
      .query(`SELECT id FROM messages WHERE channel_id = $1 ORDER BY created_at DESC, id DESC`, [ch.id]);
    expect(seen.map((m) => m.id)).toEqual(rows.map((r) => r.id));
    // ids are made under the channel's lock: id order is created_at order, so clients that sort by
    // (created_at to the millisecond, id) agree with the server
    expect([...rows.map((r) => r.id)].sort().reverse()).toEqual(rows.map((r) => r.id));
    // catching up with `after` from the very beginning walks the same set oldest first
    const forward: Msg[] = [];
    let after: string | undefined = '2000-01-01T00:00:00Z';
    while (after) {
      const page = await history(bo.api, ch.id, { limit: 33, after });
      forward.push(...page.messages);
      after = page.next_cursor ?? undefined;
    }
    expect(forward.map((m) => m.id)).toEqual([...rows.map((r) => r.id)].reverse());
    // the channel's event sequence is contiguous
    const seqs = (await eventsOf(t, ch.id)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
