import { DataSource } from 'typeorm';
import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/**
 * CONTRACT §23 under concurrency, on PostgreSQL: replies racing thread reads (a thread unread, an unsend) leave each
 * participant's unread_replies exactly what the thread's replies after their cursor say.
 */
describe('thread read state racing replies (PostgreSQL)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000' });
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo', 'cy']);
  });
  afterAll(async () => t.close());

  interface Reply {
    id: string;
    user: { external_id: string } | null;
    created_at: string;
    deleted_at: string | null;
  }

  it('20 replies racing thread reads, a thread unread and an unsend leave unread_replies exact for every participant', async () => {
    for (let round = 0; round < 3; round++) {
      const root = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: `root ${round}` }))
        .body as {
        id: string;
      };
      const first = (
        await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'first', thread_id: root.id })
      ).body as { id: string };
      const replies = Array.from({ length: 20 }, (_, i) =>
        [bo, cy, ana][i % 3]!.api.post(`/v1/channels/${ch.id}/messages`, {
          content: `reply ${i}`,
          thread_id: root.id,
        }),
      );
      const reads = [0, 1, 2, 3].map(async (k) => {
        await new Promise((r) => setTimeout(r, k * 3));
        return (k % 2 ? cy : ana).api.post(`/v1/messages/${root.id}/thread/read`);
      });
      // bo marks the thread unread from the newest reply not his own while the others keep replying
      const unread = (async () => {
        await new Promise((r) => setTimeout(r, 5));
        return bo.api.post(`/v1/messages/${root.id}/thread/unread`);
      })();
      const unsend = bo.api.delete(`/v1/messages/${first.id}`);
      const [sent, read, marked] = await Promise.all([
        Promise.all(replies),
        Promise.all(reads),
        unread,
        unsend,
      ]);
      expect(sent.map((r) => r.status)).toEqual(sent.map(() => 201));
      expect(read.map((r) => r.status)).toEqual(read.map(() => 200));
      expect(marked.status).toBe(200);

      const all = (await ana.api.get(`/v1/messages/${root.id}/replies?limit=100`)).body.messages as Reply[];
      expect(all).toHaveLength(21);
      for (const u of [ana, bo, cy]) {
        const h = (await u.api.get(`/v1/channels/${ch.id}/messages?limit=5`)).body.messages as {
          id: string;
          thread: { unread_replies: number; last_read_at: string };
        }[];
        const state = h.find((m) => m.id === root.id)!.thread;
        // the oracle: the replies after the cursor, counted one by one at the database's exact instants
        const [exact] = await t.app.get(DataSource).query(
          `SELECT count(*)::int AS n FROM thread_reads tr JOIN messages r ON r.thread_id = tr.root_id
            WHERE tr.root_id = $1 AND tr.user_id = $2 AND r.deleted_at IS NULL AND r.user_id <> tr.user_id
              AND (r.created_at, r.id) >= (tr.read_at, tr.read_id)`,
          [root.id, u.id],
        );
        expect([u.external_id, state.unread_replies]).toEqual([u.external_id, exact.n]);
        // and what the user can see: no reply after the cursor's millisecond is left out. The cursor is
        // shown a millisecond early when it stands on a reply (so that reply counts as unread), and a
        // reply in that same millisecond but before it in the thread's order is read: only the replies
        // after the millisecond following the shown instant are certainly after the cursor
        const afterCursor = new Date(Date.parse(state.last_read_at) + 1).toISOString();
        const later = all.filter(
          (m) => m.deleted_at === null && m.user?.external_id !== u.external_id && m.created_at > afterCursor,
        );
        expect(state.unread_replies).toBeGreaterThanOrEqual(later.length);
      }
    }
  });
});
