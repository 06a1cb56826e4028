import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/**
 * CONTRACT §22 under concurrency, on PostgreSQL: marks unread racing sends into the channel leave the
 * reader's counts exactly what the history says: every message from the one marked on, not the reader's.
 */
describe('mark unread racing sends (PostgreSQL)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    t = await startTestApp();
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'race',
        created_by: 'ana',
        member_external_ids: ['bo', 'cy'],
      })
    ).body;
  });
  afterAll(async () => t.close());

  it('counts every message from the marked one on, whatever committed meanwhile', async () => {
    const first: { id: string }[] = [];
    for (let i = 0; i < 10; i++)
      first.push((await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: `before ${i}` })).body);
    await ana.api.post(`/v1/channels/${ch.id}/read`, {});
    // 40 sends from bo, cy and ana, with 6 marks unread among them, all at once
    const sends = Array.from({ length: 40 }, (_, i) =>
      [bo, cy, ana][i % 3]!.api.post(`/v1/channels/${ch.id}/messages`, {
        content: `during ${i}`,
        mentions: i % 5 ? [] : ['ana'],
      }),
    );
    const marks = [2, 4, 6, 3, 5, 7].map((k) =>
      ana.api.post(`/v1/channels/${ch.id}/unread`, { message_id: first[k]!.id }),
    );
    const [sent, marked] = await Promise.all([Promise.all(sends), Promise.all(marks)]);
    expect(sent.map((r) => r.status)).toEqual(sent.map(() => 201));
    expect(marked.map((r) => r.status)).toEqual(marked.map(() => 200));

    // the position is the last mark's to commit: one of them; its count is the history's from that message on
    const history = (await ana.api.get(`/v1/channels/${ch.id}/messages?limit=100`)).body.messages as {
      id: string;
      user: { external_id: string } | null;
      created_at: string;
      mentions?: { external_id: string }[];
    }[];
    const oldestFirst = [...history].reverse();
    const view = (await ana.api.get(`/v1/me/channels/${ch.id}`)).body as {
      unread_count: number;
      mention_unread_count: number;
      last_read_at: string;
    };
    const marker = oldestFirst.findIndex(
      (m) =>
        new Date(Date.parse(m.created_at) - 1).toISOString() === view.last_read_at &&
        first.some((f) => f.id === m.id),
    );
    expect(marker).toBeGreaterThanOrEqual(2);
    const after = oldestFirst.slice(marker).filter((m) => m.user?.external_id !== 'ana');
    expect(view.unread_count).toBe(after.length);
    expect(view.mention_unread_count).toBe(
      after.filter((m) => m.mentions?.some((x) => x.external_id === 'ana')).length,
    );
  });
});
