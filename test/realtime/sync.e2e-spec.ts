import { DataSource } from 'typeorm';
import { EventRetentionService } from '../../src/events/event-retention.service';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

describe('catch-up: channel events and /v1/me/sync', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `g-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
  });

  const send = async (u: TestUser, channelId: string, content: string) =>
    (await u.api.post(`/v1/channels/${channelId}/messages`, { content })).body;
  const sync = async (u: TestUser, q = '') => {
    const res = await u.api.get(`/v1/me/sync${q}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('channel events after a seq are contiguous and page with has_more', async () => {
    for (let i = 0; i < 4; i++) await send(ana, ch.id, `m${i}`);
    const all = await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=0`);
    expect(all.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.body.events[0].type).toBe('channel.created');
    expect(all.body.events[1]).toMatchObject({
      type: 'message.new',
      channel_id: ch.id,
      data: { content: 'm0' },
    });
    const page = await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=2&limit=2`);
    expect(page.body.events.map((e: { seq: number }) => e.seq)).toEqual([3, 4]);
    expect(page.body.has_more).toBe(true);
    const outsider = await cy.api.get(`/v1/channels/${ch.id}/events?after_seq=0`);
    expect(outsider.body.error.code).toBe('NOT_A_MEMBER');
  });

  it('sync without a cursor returns the current cursor; then exactly the new events, in order', async () => {
    const other = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'other',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const first = await sync(bo);
    expect(first).toMatchObject({ events: [], has_more: false, gap: false });
    const m1 = await send(ana, ch.id, 'one');
    const m2 = await send(ana, other.id, 'two');
    const b = await sync(bo, `?since=${first.next_cursor}`);
    expect(b.events.map((e: { type: string; data: { id: string } }) => [e.type, e.data.id])).toEqual([
      ['message.new', m1.id],
      ['message.new', m2.id],
    ]);
    expect((await sync(bo, `?since=${b.next_cursor}`)).events).toEqual([]);
  });

  it('pages with limit without duplicates or gaps', async () => {
    let cursor = (await sync(bo)).next_cursor;
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) sent.push((await send(ana, ch.id, `p${i}`)).id);
    const got: string[] = [];
    for (;;) {
      const b = await sync(bo, `?since=${cursor}&limit=3`);
      got.push(...b.events.map((e: { data: { id: string } }) => e.data.id));
      cursor = b.next_cursor;
      if (!b.has_more) break;
    }
    expect(got).toEqual(sent);
  });

  it('includes own membership changes, leaves out other channels and blocked users', async () => {
    const cursor = (await sync(bo)).next_cursor;
    const room = (
      await ws.api.post('/v1/channels', { type: 'group', external_id: 'room', created_by: 'ana' })
    ).body;
    const foreign = await send(ana, room.id, 'not for bo');
    await ws.api.post(`/v1/channels/${room.id}/members`, { member_external_ids: ['bo', 'cy'] });
    await bo.api.post('/v1/me/blocks', { external_id: 'cy' });
    const hidden = await send(cy, room.id, 'from cy');
    const shown = await send(ana, ch.id, 'from ana');
    const b = await sync(bo, `?since=${cursor}`);
    const text = JSON.stringify(b.events);
    expect(
      b.events.some(
        (e: { type: string; data: { external_id: string } }) =>
          e.type === 'member.added' && e.data.external_id === 'bo',
      ),
    ).toBe(true);
    expect(text).not.toContain(foreign.id);
    expect(text).not.toContain(hidden.id);
    expect(text).toContain(shown.id);
  });

  it('answers gap: true for a cursor older than the retention window, and prunes old events', async () => {
    const stale = Buffer.from(`1.1.${Math.floor(Date.now() / 1000) - 40 * 86400}`).toString('base64url');
    const b = await sync(bo, `?since=${stale}`);
    expect(b).toMatchObject({ events: [], gap: true });
    expect((await bo.api.get('/v1/me/sync?since=nonsense')).status).toBe(400);
    await send(ana, ch.id, 'old');
    const pruned = await t.app.get(EventRetentionService).prune(new Date(Date.now() + 31 * 86400_000));
    expect(pruned).toBeGreaterThan(0);
    const left: { n: number }[] = await t.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1`, [ws.id]);
    expect(left[0]!.n).toBe(0);
  });
});
