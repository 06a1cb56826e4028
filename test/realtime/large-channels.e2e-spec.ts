import { DataSource } from 'typeorm';
import { PRESENCE_TICK_MS } from '../../src/realtime/presence.coalescer';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

/** After a control event arrived, how long more stragglers get to arrive before "nothing else came" is judged. */
const QUIET_MS = 4 * PRESENCE_TICK_MS + 400;

/**
 * Large channels (CONTRACT §29), over real sockets: a workspace whose channels are large above three
 * members. In a large channel presence does not flow, `channel.read` is not broadcast and read ticks are
 * never shown, typing is throttled, member events go to the admins and the member; small channels keep
 * today's behaviour. "Nothing came" is judged over everything a socket received, after a control event.
 */
describe('large channels', () => {
  let t: TestApp;
  let db: DataSource;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser, dan: TestUser, eve: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    expect((await ws.api.patch('/v1/workspace/settings', { large_channel_threshold: 3 })).status).toBe(200);
    [ana, bo, cy, dan, eve] = (await ws.users('ana', 'bo', 'cy', 'dan', 'eve')) as [
      TestUser,
      TestUser,
      TestUser,
      TestUser,
      TestUser,
    ];
  });
  afterEach(() => closeAllSockets());

  let n = 0;
  const group = async (by: string, members: string[]) => {
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `lg-${++n}`,
      created_by: by,
      member_external_ids: members,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; large: boolean; member_count: number };
  };
  const sock = (u: TestUser) => connectSocket(t.baseUrl, u.token);
  const channel = async (id: string) =>
    (await ws.api.get(`/v1/channels/${id}`)).body as { large: boolean; member_count: number };
  const storedCount = async (id: string) =>
    Number(
      (
        await db.query<{ member_count: number }[]>(`SELECT member_count FROM channels WHERE id = $1`, [id])
      )[0]!.member_count,
    );
  const about = (s: TestSocket, name: string, pred: (p: any) => boolean) =>
    s.events.filter((e) => e.name === name && pred(e.payload));

  it('says whether a channel is large, from its member count against the threshold, both ways', async () => {
    const ch = await group('ana', ['bo', 'cy']);
    expect(ch).toMatchObject({ member_count: 3, large: false });
    expect(
      (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan', 'eve'] })).status,
    ).toBe(200);
    expect(await channel(ch.id)).toMatchObject({ member_count: 5, large: true });
    expect(await storedCount(ch.id)).toBe(5);
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/dan`)).status).toBe(204);
    expect((await eve.api.delete(`/v1/me/channels/${ch.id}/members/eve`)).status).toBe(204);
    expect(await channel(ch.id)).toMatchObject({ member_count: 3, large: false });
    // a deleted user leaves every channel: the stored count follows
    expect((await ws.api.delete('/v1/users/cy')).status).toBe(204);
    expect(await storedCount(ch.id)).toBe(2);
    // a higher threshold makes a channel small again without touching it
    const big = await group('ana', ['bo', 'dan', 'eve']);
    expect(big.large).toBe(true);
    expect((await ws.api.patch('/v1/workspace/settings', { large_channel_threshold: 10 })).status).toBe(200);
    expect((await channel(big.id)).large).toBe(false);
  });

  it('keeps the stored member count exact under concurrent joins and leaves', async () => {
    const crowd = await ws.users(...Array.from({ length: 24 }, (_, i) => `c${i}`));
    const ch = await group(
      'ana',
      crowd.slice(0, 12).map((u) => u.external_id),
    );
    // twelve leave while twelve join, each its own request, all at once
    const results = await Promise.all([
      ...crowd
        .slice(12)
        .map((u) => ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: [u.external_id] })),
      ...crowd.slice(0, 12).map((u) => u.api.delete(`/v1/me/channels/${ch.id}/members/${u.external_id}`)),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([...Array(12).fill(200), ...Array(12).fill(204)]);
    const [row] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM channel_members WHERE channel_id = $1`,
      [ch.id],
    );
    expect(row!.n).toBe(13);
    expect(await storedCount(ch.id)).toBe(13);
    expect(await channel(ch.id)).toMatchObject({ member_count: 13, large: true });
  });

  it('announces presence only through channels that are not large, once per partner', async () => {
    await group('ana', ['bo', 'cy', 'dan']); // large: ana and bo share only this
    await group('ana', ['eve']); // two small channels shared by ana and eve
    await group('eve', ['ana']);
    const sa = await sock(ana);
    await sock(bo);
    await sock(eve);
    await sa.waitFor('presence.changed', (e) => e.data.external_id === 'eve' && e.data.online);
    await sleep(QUIET_MS);
    expect(about(sa, 'presence.changed', (e) => e.data.external_id === 'eve')).toHaveLength(1);
    expect(about(sa, 'presence.changed', (e) => e.data.external_id === 'bo')).toEqual([]);
    // asked for, bo's presence is there
    const big = (await ana.api.get('/v1/me/channels')).body.channels.find((c: { large: boolean }) => c.large);
    const page = (await ana.api.get(`/v1/channels/${big.id}/presence`)).body;
    expect(page.members.find((m: { external_id: string }) => m.external_id === 'bo')).toMatchObject({
      online: true,
    });
  });

  it('does not broadcast channel.read in a large channel and shows no read ticks there; a small channel does', async () => {
    const big = await group('ana', ['bo', 'cy', 'dan']);
    const small = await group('ana', ['bo']);
    const [mBig, mSmall] = [
      (await ana.api.post(`/v1/channels/${big.id}/messages`, { content: 'in the large one' })).body,
      (await ana.api.post(`/v1/channels/${small.id}/messages`, { content: 'in the small one' })).body,
    ];
    const sa = await sock(ana);
    for (const u of [bo, cy, dan]) expect((await u.api.post(`/v1/channels/${big.id}/read`)).status).toBe(200);
    expect((await bo.api.post(`/v1/channels/${small.id}/read`)).status).toBe(200);
    await sa.waitFor('channel.read', (e) => e.channel_id === small.id);
    await sleep(QUIET_MS);
    expect(about(sa, 'channel.read', (e) => e.channel_id === big.id)).toEqual([]);
    // everyone read both, but only the small channel shows it
    const statusOf = async (ch: string, id: string) =>
      (await ana.api.get(`/v1/channels/${ch}/messages`)).body.messages.find(
        (m: { id: string }) => m.id === id,
      ).receipt_status;
    expect(await statusOf(big.id, mBig.id)).toBe('delivered');
    expect(await statusOf(small.id, mSmall.id)).toBe('read');
    const receipts = (await ana.api.get(`/v1/channels/${big.id}/receipts`)).body.members;
    expect(receipts.find((m: { external_id: string }) => m.external_id === 'bo').last_read_at).toEqual(
      expect.any(String),
    );
  });

  it('sends member events of a large channel to its admins and the member concerned only', async () => {
    const big = await group('ana', ['bo', 'cy', 'dan']); // ana is its admin
    const since = (await eve.api.get('/v1/me/sync')).body.next_cursor as string;
    const [sa, sb, se] = [await sock(ana), await sock(bo), await sock(eve)];
    expect(
      (await ws.api.post(`/v1/channels/${big.id}/members`, { member_external_ids: ['eve'] })).status,
    ).toBe(200);
    await sa.waitFor('member.added', (e) => e.channel_id === big.id);
    await se.waitFor('member.added', (e) => e.channel_id === big.id);
    expect((await ws.api.patch(`/v1/channels/${big.id}/members/cy`, { role: 'admin' })).status).toBe(200);
    await sa.waitFor('member.role_changed', (e) => e.channel_id === big.id);
    expect((await ws.api.delete(`/v1/channels/${big.id}/members/dan`)).status).toBe(204);
    await sa.waitFor('member.removed', (e) => e.channel_id === big.id);
    const m = (await ana.api.post(`/v1/channels/${big.id}/messages`, { content: 'control' })).body;
    await sb.waitFor('message.new', (e) => e.data.id === m.id);
    await sleep(QUIET_MS);
    expect(about(sb, 'member.added', () => true)).toEqual([]);
    expect(about(sb, 'member.role_changed', () => true)).toEqual([]);
    expect(about(sb, 'member.removed', () => true)).toEqual([]);
    // a plain member's seqs have no gap where the events it was not told of would be, and the channel's
    // events (what a client fills a gap from) do not hold them; the member concerned finds its own in sync
    const seqs = about(sb, 'message.new', () => true).map((e) => e.payload.seq as number);
    const events = (await bo.api.get(`/v1/channels/${big.id}/events`)).body.events as {
      type: string;
      seq: number;
    }[];
    expect(events.map((e) => e.type)).not.toEqual(expect.arrayContaining(['member.added']));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => events[0]!.seq + i));
    expect(seqs.at(-1)).toBe(events.at(-1)!.seq);
    const synced = (await eve.api.get(`/v1/me/sync?since=${encodeURIComponent(since)}`)).body.events as {
      type: string;
      channel_id?: string;
    }[];
    expect(synced.find((e) => e.type === 'member.added' && e.channel_id === big.id)).toMatchObject({
      channel_id: big.id,
    });
    // a small channel: every member hears
    const small = await group('ana', ['bo']);
    expect(
      (await ws.api.post(`/v1/channels/${small.id}/members`, { member_external_ids: ['cy'] })).status,
    ).toBe(200);
    await sb.waitFor('member.added', (e) => e.channel_id === small.id);
  });

  it('fans out at most one typing.start a second in a large channel, the latest typer, and no typing.stop', async () => {
    const big = await group('ana', ['bo', 'cy', 'dan']);
    const sa = await sock(ana);
    const [sb, sc, sd] = [await sock(bo), await sock(cy), await sock(dan)];
    for (const s of [sb, sc, sd])
      expect(await s.emitAck('typing.start', { channel_id: big.id })).toMatchObject({ ok: true });
    // bo's goes out at once; cy's is replaced by dan's, which goes out when the second is over
    await sa.waitFor('typing.start', (e) => e.data.external_id === 'dan', 3000);
    expect(await sb.emitAck('typing.stop', { channel_id: big.id })).toMatchObject({ ok: true });
    const m = (await bo.api.post(`/v1/channels/${big.id}/messages`, { content: 'control' })).body;
    await sa.waitFor('message.new', (e) => e.data.id === m.id);
    await sleep(1200);
    expect(about(sa, 'typing.start', () => true).map((e) => e.payload.data.external_id)).toEqual([
      'bo',
      'dan',
    ]);
    expect(about(sa, 'typing.stop', () => true)).toEqual([]);
    // a start waiting for its second is withdrawn by its typer's stop
    await sleep(1100);
    for (const s of [sb, sc])
      expect(await s.emitAck('typing.start', { channel_id: big.id })).toMatchObject({ ok: true });
    expect(await sc.emitAck('typing.stop', { channel_id: big.id })).toMatchObject({ ok: true });
    const m2 = (await bo.api.post(`/v1/channels/${big.id}/messages`, { content: 'control 2' })).body;
    await sa.waitFor('message.new', (e) => e.data.id === m2.id);
    await sleep(1200);
    expect(about(sa, 'typing.start', () => true).map((e) => e.payload.data.external_id)).toEqual([
      'bo',
      'dan',
      'bo',
    ]);
  });

  it('pages presence: online members first, each group by external_id, with online_count', async () => {
    const big = await group('ana', ['bo', 'cy', 'dan', 'eve']);
    await sock(dan);
    await sock(bo);
    await sleep(2 * PRESENCE_TICK_MS);
    const pages: { external_id: string; online: boolean }[][] = [];
    let cursor: string | undefined;
    const counts: number[] = [];
    do {
      const res = await ana.api.get(
        `/v1/channels/${big.id}/presence?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      pages.push(res.body.members);
      counts.push(res.body.online_count);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
    } while (cursor);
    expect(pages.map((p) => p.map((m) => `${m.external_id}:${m.online}`))).toEqual([
      ['bo:true', 'dan:true'],
      ['ana:false', 'cy:false'],
      ['eve:false'],
    ]);
    expect(new Set(counts)).toEqual(new Set([2]));
    for (const q of ['limit=0', 'limit=201', 'limit=x', 'cursor=nonsense'])
      expect((await ana.api.get(`/v1/channels/${big.id}/presence?${q}`)).body.error.code).toBe(
        'VALIDATION_ERROR',
      );
  });

  describe('presence subscriptions', () => {
    const sockIn = (u: TestUser, presence: string) => connectSocket(t.baseUrl, u.token, { presence });
    const changes = (s: TestSocket, who: string) =>
      about(s, 'presence.changed', (e) => e.data.external_id === who).map(
        (e) => e.payload.data.online as boolean,
      );

    it('tells a subscriber of users it shares only a large channel with, once per change; ignores the others', async () => {
      await group('ana', ['bo', 'cy', 'dan']); // large
      await group('ana', ['eve']); // small: eve is a partner too
      await (await newWorkspace(t)).user('zed'); // another workspace's
      const sa = await sock(ana);
      const ack = await sa.emitAck('presence.subscribe', {
        external_ids: ['bo', 'eve', 'zed', 'nobody', 'ana'],
      });
      expect(ack).toEqual({
        ok: true,
        data: {
          users: expect.arrayContaining([
            { external_id: 'bo', online: false, last_seen_at: null },
            { external_id: 'eve', online: false, last_seen_at: null },
          ]),
        },
      });
      expect(ack.data.users).toHaveLength(2);
      const sb = await sock(bo);
      const se = await sock(eve);
      await sa.waitFor('presence.changed', (e) => e.data.external_id === 'bo' && e.data.online);
      await sa.waitFor('presence.changed', (e) => e.data.external_id === 'eve' && e.data.online);
      sb.close();
      se.close();
      await sa.waitFor('presence.changed', (e) => e.data.external_id === 'bo' && !e.data.online, 6000);
      await sa.waitFor('presence.changed', (e) => e.data.external_id === 'eve' && !e.data.online, 6000);
      await sleep(QUIET_MS);
      expect(changes(sa, 'bo')).toEqual([true, false]);
      expect(changes(sa, 'eve')).toEqual([true, false]); // a partner and a subscriber hears each change once
      // the state at subscription time, once known
      const again = await sa.emitAck('presence.subscribe', { external_ids: ['bo'] });
      expect(again.data.users[0]).toMatchObject({
        external_id: 'bo',
        online: false,
        last_seen_at: expect.any(String),
      });
    });

    it('stops after presence.unsubscribe; a batch socket gets what it subscribed to', async () => {
      await group('ana', ['bo', 'cy', 'dan']); // large
      const sa = await sock(ana);
      const batch = await sockIn(ana, 'batch');
      expect((await sa.emitAck('presence.subscribe', { external_ids: ['bo', 'cy'] })).ok).toBe(true);
      expect((await batch.emitAck('presence.subscribe', { external_ids: ['bo'] })).ok).toBe(true);
      expect(
        await sa.emitAck('presence.unsubscribe', { external_ids: ['bo', 'never-subscribed'] }),
      ).toMatchObject({ ok: true });
      await sock(bo);
      await sock(cy);
      await sa.waitFor('presence.changed', (e) => e.data.external_id === 'cy' && e.data.online);
      await batch.waitFor('presence.changed', (e) => e.data.external_id === 'bo' && e.data.online);
      await sleep(QUIET_MS);
      expect(changes(sa, 'bo')).toEqual([]);
      expect(changes(batch, 'cy')).toEqual([]);
    });

    it('a batch socket hears of a subscribed partner in its batches only, not twice', async () => {
      await group('ana', ['bo']); // small: bo is a partner
      const batch = await sockIn(ana, 'batch');
      expect((await batch.emitAck('presence.subscribe', { external_ids: ['bo'] })).ok).toBe(true);
      await sock(bo);
      await batch.waitFor('presence.batch', (e) => e.data.online.includes('bo'), 4000);
      await sleep(QUIET_MS + 1000);
      expect(changes(batch, 'bo')).toEqual([]);
    });

    it('refuses bad subscriptions with VALIDATION_ERROR, and more than 500 per socket subscribing nothing', async () => {
      const sa = await sock(ana);
      for (const bad of [
        {},
        { external_ids: [] },
        { external_ids: 'bo' },
        { external_ids: [''] },
        { external_ids: Array(201).fill('bo') },
      ])
        expect(await sa.emitAck('presence.subscribe', bad)).toMatchObject({
          ok: false,
          error: { code: 'VALIDATION_ERROR' },
        });
      const ids = Array.from({ length: 501 }, (_, i) => `m${i}`);
      for (let i = 0; i < ids.length; i += 100)
        expect(
          (
            await ws.api.post('/v1/users', {
              users: ids.slice(i, i + 100).map((id) => ({ external_id: id })),
            })
          ).status,
        ).toBe(200);
      const ch = await group('ana', []);
      for (let i = 0; i < ids.length; i += 100)
        expect(
          (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ids.slice(i, i + 100) }))
            .status,
        ).toBe(200);
      for (let i = 0; i < 400; i += 200)
        expect(
          (await sa.emitAck('presence.subscribe', { external_ids: ids.slice(i, i + 200) })).data.users,
        ).toHaveLength(200);
      const over = await sa.emitAck('presence.subscribe', { external_ids: ids.slice(400, 501) });
      expect(over).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
      // nothing of the refused call was subscribed: 100 more still fit
      expect(
        (await sa.emitAck('presence.subscribe', { external_ids: ids.slice(400, 500) })).data.users,
      ).toHaveLength(100);
    });
  });
});
