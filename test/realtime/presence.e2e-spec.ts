import { BATCH_INTERVAL_MS, OFFLINE_GRACE_MS, PRESENCE_TICK_MS } from '../../src/realtime/presence.coalescer';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';

/** Long enough for any pending announcement (a close waits out the grace, then the next tick). */
const SETTLE_MS = OFFLINE_GRACE_MS + 3 * PRESENCE_TICK_MS + 300;
/** ... and for batches, which go out at most once per BATCH_INTERVAL_MS */
const BATCH_SETTLE_MS = SETTLE_MS + BATCH_INTERVAL_MS;

/**
 * Presence as a member sees it, over real sockets: announcements are coalesced per tick and a close
 * is announced only after a short grace, but the promises stay — a partner hears the user go online
 * and offline, the last thing it hears is the user's real state, a user with several sockets is
 * online until the last one closes, and GET /v1/channels/:id/presence agrees.
 */
describe('presence', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser, dan: TestUser;
  let ch: { id: string };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy, dan] = (await ws.users('ana', 'bo', 'cy', 'dan')) as [
      TestUser,
      TestUser,
      TestUser,
      TestUser,
    ];
    ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `p-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo', 'cy', 'dan'],
      })
    ).body;
  });
  afterEach(() => {
    closeAllSockets();
  });

  const sock = (u: TestUser) => connectSocket(t.baseUrl, u.token);
  /** A socket that asks for a presence mode at the handshake. */
  const sockIn = (u: TestUser, presence: string) => connectSocket(t.baseUrl, u.token, { presence });
  const presenceOf = async (externalId: string) => {
    const res = await ws.api.get(`/v1/channels/${ch.id}/presence`);
    expect(res.status).toBe(200);
    return res.body.members.find((m: { external_id: string }) => m.external_id === externalId) as {
      online: boolean;
      last_seen_at: string | null;
    };
  };
  /** the presence.changed a socket got about one user, in order */
  const changesAbout = (s: TestSocket, externalId: string) =>
    s.events
      .filter((e) => e.name === 'presence.changed' && e.payload?.data?.external_id === externalId)
      .map((e) => e.payload.data as { online: boolean; last_seen_at: string | null });
  const isAbout = (externalId: string, online: boolean) => (e: any) =>
    e?.data?.external_id === externalId && e.data.online === online;

  it('a partner sees the user go online and then offline, in the contract’s shape, and GET presence agrees', async () => {
    const sa = await sock(ana);
    const sb = await sock(bo);
    const on = await sa.waitFor('presence.changed', isAbout('bo', true));
    expect(on).toEqual({
      v: 1,
      type: 'presence.changed',
      data: { external_id: 'bo', online: true, last_seen_at: null },
      ts: expect.any(String),
    });
    expect(await presenceOf('bo')).toMatchObject({ online: true });
    // a user is not told about itself
    expect(changesAbout(sb, 'bo')).toEqual([]);

    sb.close();
    const off = await sa.waitFor('presence.changed', isAbout('bo', false), SETTLE_MS + 5000);
    expect(off.data.last_seen_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    // last_seen_at is written before anyone hears the user is offline
    expect(await presenceOf('bo')).toEqual({
      external_id: 'bo',
      role: 'member',
      online: false,
      last_seen_at: off.data.last_seen_at,
    });
  });

  it('a user with two sockets stays online when one closes, and goes offline with the last', async () => {
    const sa = await sock(ana);
    const [b1, b2] = await Promise.all([sock(bo), sock(bo)]);
    await sa.waitFor('presence.changed', isAbout('bo', true));
    b1.close();
    await sleep(SETTLE_MS);
    expect(changesAbout(sa, 'bo')).toEqual([{ external_id: 'bo', online: true, last_seen_at: null }]);
    expect(await presenceOf('bo')).toMatchObject({ online: true });
    // the remaining socket still gets channel events
    const m = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'still here?' })).body;
    await b2.waitFor('message.new', (e) => e?.data?.id === m.id);

    b2.close();
    await sa.waitFor('presence.changed', isAbout('bo', false), SETTLE_MS + 5000);
    expect(await presenceOf('bo')).toMatchObject({ online: false });
  });

  it('a reconnect within the grace is not announced; flapping ends on the final state', async () => {
    const sa = await sock(ana);
    let sb = await sock(bo);
    await sa.waitFor('presence.changed', isAbout('bo', true));
    // a reload: close and come back at once: partners hear nothing, bo stays online
    sb.close();
    sb = await sock(bo);
    await sleep(SETTLE_MS);
    expect(changesAbout(sa, 'bo').map((c) => c.online)).toEqual([true]);
    expect(await presenceOf('bo')).toMatchObject({ online: true });

    // flapping that ends offline: the last word is offline, and GET agrees
    sb.close();
    sb = await sock(bo);
    sb.close();
    sb = await sock(bo);
    sb.close();
    await sa.waitFor('presence.changed', isAbout('bo', false), SETTLE_MS + 5000);
    await sleep(SETTLE_MS);
    const seen = changesAbout(sa, 'bo').map((c) => c.online);
    expect(seen[seen.length - 1]).toBe(false);
    expect(await presenceOf('bo')).toMatchObject({ online: false });

    // and flapping that ends online: the last word is online
    sb = await sock(bo);
    sb.close();
    sb = await sock(bo);
    await sa.waitFor('presence.changed', isAbout('bo', true), SETTLE_MS + 5000);
    await sleep(SETTLE_MS);
    const after = changesAbout(sa, 'bo').map((c) => c.online);
    expect(after[after.length - 1]).toBe(true);
    expect(await presenceOf('bo')).toMatchObject({ online: true });
  });

  it('a socket that opens and closes at once leaves its user offline: announced not at all, or online then offline', async () => {
    const sa = await sock(ana);
    const sb = await sock(bo);
    sb.close();
    await sleep(SETTLE_MS);
    // usually nothing (both fall into one tick); on a slow machine the close may reach the server a tick later
    const heard = changesAbout(sa, 'bo').map((c) => c.online);
    expect([[], [true, false]]).toContainEqual(heard);
    expect(await presenceOf('bo')).toMatchObject({ online: false });
  });

  it('several users coming online in the same moment reach every partner, each with its own presence.changed', async () => {
    const sa = await sock(ana);
    await Promise.all([sock(bo), sock(cy), sock(dan)]);
    for (const who of ['bo', 'cy', 'dan']) await sa.waitFor('presence.changed', isAbout(who, true));
    await sleep(SETTLE_MS);
    // one announcement per user, however the connects fell into ticks
    for (const who of ['bo', 'cy', 'dan']) expect(changesAbout(sa, who)).toHaveLength(1);
  });

  it("auth.presence 'batch' gets presence.batch per channel instead; 'none' gets no presence events", async () => {
    const batched = await sockIn(ana, 'batch');
    const silent = await sockIn(cy, 'none');
    const each = await sock(dan);
    await sleep(BATCH_SETTLE_MS); // cy's and dan's own announcements are out of the way
    batched.events.length = 0;
    const [sb] = await Promise.all([sock(bo), sockIn(cy, 'none'), sock(dan)]);
    await batched.waitFor('presence.batch', (e) => e?.data?.online?.includes('bo'));
    await sleep(BATCH_SETTLE_MS);
    const batches = batched.events.filter((e) => e.name === 'presence.batch').map((e) => e.payload);
    expect(batches.length).toBeGreaterThan(0);
    for (const b of batches) {
      expect(b).toEqual({
        v: 1,
        type: 'presence.batch',
        channel_id: ch.id,
        data: { online: expect.any(Array), offline: expect.any(Array) },
        ts: expect.any(String),
      });
    }
    // cy and dan were online already (another socket each): only bo is news
    expect(batches.flatMap((b) => b.data.online)).toEqual(['bo']);
    expect(batches.flatMap((b) => b.data.offline)).toEqual([]);
    expect(batched.events.filter((e) => e.name === 'presence.changed')).toEqual([]);
    expect(silent.events.filter((e) => e.name.startsWith('presence.'))).toEqual([]);
    expect(changesAbout(each, 'bo')).toEqual([{ external_id: 'bo', online: true, last_seen_at: null }]);
    expect(each.events.filter((e) => e.name === 'presence.batch')).toEqual([]);

    // going offline arrives batched too, with last_seen_at
    sb.close();
    const off = await batched.waitFor(
      'presence.batch',
      (e) => e?.data?.offline?.some((u: any) => u.external_id === 'bo'),
      BATCH_SETTLE_MS + 5000,
    );
    const offChange = await each.waitFor('presence.changed', isAbout('bo', false));
    // the same last_seen_at as presence.changed and GET presence
    expect(off.data).toEqual({
      online: [],
      offline: [{ external_id: 'bo', last_seen_at: offChange.data.last_seen_at }],
    });
    expect(await presenceOf('bo')).toMatchObject({
      online: false,
      last_seen_at: offChange.data.last_seen_at,
    });
    expect(silent.events.filter((e) => e.name.startsWith('presence.'))).toEqual([]);
  });

  it('a batch socket follows membership changes: added to a channel it gets its batches, removed it stops', async () => {
    const other = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `q-${Date.now()}`,
        created_by: 'bo',
        member_external_ids: ['cy'],
      })
    ).body;
    const batched = await sockIn(ana, 'batch');
    await ws.api.post(`/v1/channels/${other.id}/members`, { member_external_ids: ['ana'] });
    await batched.waitFor('member.added', (e) => e?.channel_id === other.id);
    const sc = await sock(cy);
    await batched.waitFor(
      'presence.batch',
      (e) => e?.channel_id === other.id && e.data.online.includes('cy'),
    );

    await ws.api.delete(`/v1/channels/${other.id}/members/ana`);
    await batched.waitFor('member.removed', (e) => e?.channel_id === other.id);
    batched.events.length = 0;
    sc.close();
    // cy leaves: ana hears it in the channel they still share, not in the one ana left
    await batched.waitFor(
      'presence.batch',
      (e) => e?.channel_id === ch.id && e.data.offline.some((u: any) => u.external_id === 'cy'),
      BATCH_SETTLE_MS + 5000,
    );
    await sleep(BATCH_SETTLE_MS);
    expect(
      batched.events.filter((e) => e.name === 'presence.batch' && e.payload.channel_id === other.id),
    ).toEqual([]);
  });

  it('a batch carries every change since the previous one: many connects, few frames', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `u${i}`);
    const users = await ws.users(...names);
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: names });
    const batched = await sockIn(ana, 'batch');
    await sleep(BATCH_SETTLE_MS);
    batched.events.length = 0; // ana's own announcement (a batch goes to the whole channel, ana included)
    await Promise.all(users.map((u) => sock(u)));
    await sleep(BATCH_SETTLE_MS);
    const batches = batched.events.filter((e) => e.name === 'presence.batch').map((e) => e.payload);
    const seen = batches.flatMap((b) => b.data.online).sort();
    expect(seen).toEqual([...names].sort());
    // twelve users, fewer frames than users (they arrive within a tick or two)
    expect(batches.length).toBeLessThan(names.length);
  });

  it('batches go out at most once a second; every user arrives, default sockets still get one presence.changed each', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `s${i}`);
    const users = await ws.users(...names);
    for (let i = 0; i < names.length; i += 20)
      await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: names.slice(i, i + 20) });
    const batched = await sockIn(ana, 'batch');
    const each = await sock(bo);
    await sleep(BATCH_SETTLE_MS);
    batched.events.length = 0;
    await Promise.all(users.map((u) => sock(u)));
    await sleep(BATCH_SETTLE_MS);
    const batches = batched.events.filter((e) => e.name === 'presence.batch').map((e) => e.payload);
    expect(batches.flatMap((b) => b.data.online).sort()).toEqual([...names].sort());
    expect(batches.length).toBeLessThan(names.length / 4);
    for (const n of names)
      expect(changesAbout(each, n)).toEqual([{ external_id: n, online: true, last_seen_at: null }]);
  });
});
