import { startTestApp, TestApp } from '../support/app';
import type { TestUser } from '../support/fixtures';
import { eventsOf, group, history, Msg, send } from './helpers';
import { newWorkspace } from '../support/fixtures';

/** Thread counters under real parallel writers (PostgreSQL, many connections). */
describe('thread counters under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '1000' });
  });
  afterAll(async () => t.close());

  async function crowd(n: number) {
    const ws = await newWorkspace(t);
    const users: TestUser[] = await ws.users(...Array.from({ length: n }, (_, i) => `u${i}`));
    const ch = await group(
      ws,
      'u0',
      users.slice(1).map((u) => u.external_id),
    );
    return { ws, ch, users };
  }

  const rootIn = async (api: TestUser['api'], channelId: string, id: string) =>
    (await history(api, channelId, { limit: 100 })).messages.find((m) => m.id === id) as Msg & {
      reply_count: number;
      last_reply_at: string | null;
      thread_participants: { external_id: string }[];
    };

  it('20 concurrent replies by 12 authors leave reply_count 20, the 10 earliest authors once each, the newest last_reply_at', async () => {
    const { ch, users } = await crowd(12);
    const root = await send(users[0]!, ch.id, 'root');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        users[i % 12]!.api.post(`/v1/channels/${ch.id}/messages`, { content: `r${i}`, thread_id: root.id }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
    const replies = (await users[0]!.api.get(`/v1/messages/${root.id}/replies`)).body.messages as Msg[];
    expect(replies).toHaveLength(20);
    const r = await rootIn(users[0]!.api, ch.id, root.id);
    expect(r.reply_count).toBe(20);
    expect(r.last_reply_at).toBe(replies[19]!.created_at);
    // the authors in the order of their first reply, as the replies were stored
    const firstAuthors = [...new Set(replies.map((m) => m.user!.external_id))].slice(0, 10);
    expect(r.thread_participants.map((p) => p.external_id)).toEqual(firstAuthors);

    // every reply and counter event took the next seq, none lost or doubled
    const log = await eventsOf(t, ch.id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    const counters = log
      .filter((e) => e.type === 'thread.updated')
      .map((e) => (e.payload.message as { reply_count: number }).reply_count);
    expect(counters).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('replies and unsends racing on one thread leave reply_count equal to the live replies', async () => {
    const { ch, users } = await crowd(4);
    const root = await send(users[0]!, ch.id, 'root');
    const first: Msg[] = [];
    for (let i = 0; i < 10; i++)
      first.push(await send(users[i % 4]!, ch.id, { content: `early ${i}`, thread_id: root.id }));
    const ops = [
      ...first.map((m) => users[first.indexOf(m) % 4]!.api.delete(`/v1/messages/${m.id}`)),
      ...Array.from({ length: 10 }, (_, i) =>
        users[i % 4]!.api.post(`/v1/channels/${ch.id}/messages`, {
          content: `late ${i}`,
          thread_id: root.id,
        }),
      ),
    ];
    const answers = await Promise.all(ops);
    expect(answers.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const replies = (await users[0]!.api.get(`/v1/messages/${root.id}/replies`)).body.messages as Msg[];
    const live = replies.filter((m) => m.deleted_at === null);
    expect([replies.length, live.length]).toEqual([20, 10]);
    const r = await rootIn(users[1]!.api, ch.id, root.id);
    expect([r.reply_count, r.last_reply_at]).toEqual([10, live[live.length - 1]!.created_at]);
  });
});
