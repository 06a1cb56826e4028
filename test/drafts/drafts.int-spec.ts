import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/**
 * CONTRACT §24 under concurrency, on PostgreSQL: a save racing the user's send into the same channel
 * never leaves a draft the send should have taken. Either the send came second and the draft is gone,
 * or the save came second: then the draft is the saved text, stamped after the message, and the user's
 * sync ends with its draft.updated.
 */
describe('drafts racing sends (PostgreSQL)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let chs: { id: string }[];

  beforeAll(async () => {
    t = await startTestApp();
    ws = await newWorkspace(t);
    [ana] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    chs = [];
    for (let i = 0; i < 12; i++) chs.push(await group(ws, 'ana', ['bo']));
  });
  afterAll(async () => t.close());

  it('leaves no stale draft, whichever commits first', async () => {
    const outcomes = { gone: 0, later: 0 };
    for (let round = 0; round < 4; round++) {
      for (const ch of chs)
        expect((await ana.api.put(`/v1/channels/${ch.id}/draft`, { content: 'typing' })).status).toBe(201);
      const since = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
      const results = await Promise.all(
        chs.map(async (ch) => {
          const [save, sent] = await Promise.all([
            ana.api.put(`/v1/channels/${ch.id}/draft`, { content: `typed more ${round}` }),
            ana.api.post(`/v1/channels/${ch.id}/messages`, { content: `sent ${round}` }),
          ]);
          expect([200, 201]).toContain(save.status);
          expect(sent.status).toBe(201);
          return { ch, sent: sent.body as { created_at: string } };
        }),
      );
      const events = (await ana.api.get(`/v1/me/sync?since=${since}&limit=500`)).body.events as {
        type: string;
        channel_id?: string;
        data: { draft?: { channel_id: string }; channel_id?: string };
      }[];
      for (const { ch, sent } of results) {
        const now = await ana.api.get(`/v1/channels/${ch.id}/draft`);
        const last = events
          .filter(
            (e) => (e.data.draft?.channel_id ?? e.data.channel_id) === ch.id && e.type.startsWith('draft.'),
          )
          .at(-1);
        if (now.status === 404) {
          outcomes.gone++;
          expect(last?.type).toBe('draft.deleted');
        } else {
          outcomes.later++;
          expect(now.body.content).toBe(`typed more ${round}`);
          expect(Date.parse(now.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(sent.created_at));
          expect(last?.type).toBe('draft.updated');
        }
      }
      // the next round starts from a draft in every channel
      for (const ch of chs) await ana.api.delete(`/v1/channels/${ch.id}/draft`);
    }
    expect(outcomes.gone + outcomes.later).toBe(48);
  });
});
