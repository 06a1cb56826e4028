import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace, userToken } from '../support/fixtures';
import { closeAllSockets, connectError, connectSocket, sleep } from '../support/socket';

const isMsg = (id: string) => (e: any) => e?.data?.id === id;

describe('realtime', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `g-${Date.now()}`,
      created_by: 'ana',
      member_external_ids: ['bo', 'cy'],
    });
    ch = res.body;
  });
  afterEach(() => closeAllSockets());

  const send = async (u: TestUser, content: string, extra: Record<string, unknown> = {}) => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, { content, ...extra });
    expect(res.status).toBe(201);
    return res.body;
  };
  const sock = (u: TestUser) => connectSocket(t.baseUrl, u.token);

  it('refuses a bad handshake with connect_error carrying the UNAUTHORIZED body', async () => {
    for (const token of [
      undefined,
      'garbage',
      userToken(ws.apiKey, 'sk_wrong', 'ana'),
      userToken(ws.apiKey, ws.apiSecret, 'ana', -10),
    ]) {
      const err = await connectError(t.baseUrl, token);
      expect(err.data?.error?.code).toBe('UNAUTHORIZED');
    }
  });

  it('fans a REST send out to every member socket, the sender’s other device included, in the envelope', async () => {
    const [a1, a2, sb, sc] = await Promise.all([sock(ana), sock(ana), sock(bo), sock(cy)]);
    const m = await send(ana, 'hello');
    for (const s of [a1, a2, sb, sc]) {
      const env = await s.waitFor('message.new', isMsg(m.id));
      expect(env).toMatchObject({
        v: 1,
        type: 'message.new',
        channel_id: ch.id,
        data: { id: m.id, content: 'hello', user: { external_id: 'ana' } },
      });
      expect(Number.isInteger(env.seq)).toBe(true);
      expect(typeof env.ts).toBe('string');
    }
  });

  it('seq is contiguous per channel and equal for all receivers', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await send(ana, `m${i}`)).id);
    const seqA = [];
    const seqB = [];
    for (const id of ids) {
      seqA.push((await sa.waitFor('message.new', isMsg(id))).seq);
      seqB.push((await sb.waitFor('message.new', isMsg(id))).seq);
    }
    expect(seqA).toEqual([seqA[0], seqA[0] + 1, seqA[0] + 2]);
    expect(seqB).toEqual(seqA);
  });

  it('does not deliver to non-members nor to blockers', async () => {
    const dan = await ws.user('dan');
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
    const [sd, sa, sc] = await Promise.all([sock(dan), sock(ana), sock(cy)]);
    const m = await send(bo, 'hidden from ana');
    await sc.waitFor('message.new', isMsg(m.id));
    // controls, committed after m: one for ana in the channel, one for dan in a channel of his
    const control = await send(cy, 'control');
    await sa.expectNoneBefore('message.new', isMsg(m.id), ['message.new', isMsg(control.id)]);
    const side = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `side-${Date.now()}`,
      created_by: 'cy',
      member_external_ids: ['dan'],
    });
    await sd.waitFor('channel.created', (e) => e?.channel_id === side.body.id); // his socket is in its room
    const toDan = (await cy.api.post(`/v1/channels/${side.body.id}/messages`, { content: 'control' })).body;
    await sd.expectNoneBefore('message.new', isMsg(m.id), ['message.new', isMsg(toDan.id)]);
  });

  it('edit, unsend, reactions and mentions reach members', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    const m = await send(ana, 'orig', { mentions: ['bo'] });
    const mention = await sb.waitFor('notification.mention', (e) => e?.data?.message?.id === m.id);
    expect(mention.data.message.mentions[0].external_id).toBe('bo');
    await sb.waitFor('message.mentioned', (e) => e?.data?.message_id === m.id);
    await ana.api.patch(`/v1/messages/${m.id}`, { content: 'edited' });
    expect((await sb.waitFor('message.updated', (e) => e?.data?.id === m.id)).data.content).toBe('edited');
    await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' });
    await bo.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '🎉' });
    const add2 = await sa.waitFor('reaction.add', (e) => e?.data?.emoji === '🎉');
    const remove = await sa.waitFor('reaction.remove', (e) => e?.data?.emoji === '👍');
    expect(remove.seq).toBeLessThan(add2.seq);
    await ana.api.delete(`/v1/messages/${m.id}`);
    expect((await sb.waitFor('message.deleted', (e) => e?.data?.id === m.id)).data.deleted_at).toBeTruthy();
  });

  it('inbound message.send, channel.read and channel.delivered answer acknowledgements', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    const ack = await sa.emitAck('message.send', {
      channel_id: ch.id,
      content: 'via socket',
      idempotency_key: 'k1',
    });
    expect(ack.ok).toBe(true);
    await sb.waitFor('message.new', isMsg(ack.data.id));
    const again = await sa.emitAck('message.send', {
      channel_id: ch.id,
      content: 'via socket',
      idempotency_key: 'k1',
    });
    expect(again.data.id).toBe(ack.data.id);
    const bad = await sa.emitAck('message.send', { channel_id: ch.id, content: 'x', bogus: 1 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
    const read = await sb.emitAck('channel.read', { channel_id: ch.id });
    expect(read.ok).toBe(true);
    const rb = await sa.waitFor('channel.read', (e) => e?.channel_id === ch.id);
    expect(rb.data).toMatchObject({ external_id: 'bo' });
    expect((await sb.emitAck('channel.delivered', { channel_id: ch.id })).ok).toBe(true);
    const dan = await ws.user('dan');
    const sd = await sock(dan);
    expect(await sd.emitAck('message.send', { channel_id: ch.id, content: 'no' })).toMatchObject({
      ok: false,
      error: { code: 'NOT_A_MEMBER' },
    });
  });

  it('channel.read is not broadcast when read receipts are disabled', async () => {
    await ws.api.patch('/v1/workspace/settings', { read_receipts_enabled: false });
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    expect((await sb.emitAck('channel.read', { channel_id: ch.id })).ok).toBe(true);
    const control = await send(bo, 'control');
    await sa.expectNoneBefore('channel.read', () => true, ['message.new', isMsg(control.id)]);
  });

  it('membership changes move connected sockets without reconnecting', async () => {
    const dan = await ws.user('dan');
    const [sd, sc] = await Promise.all([sock(dan), sock(cy)]);
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['dan'] });
    await sd.waitFor('member.added', (e) => e?.data?.external_id === 'dan');
    await ws.api.delete(`/v1/channels/${ch.id}/members/cy`);
    await sc.waitFor('member.removed', (e) => e?.data?.external_id === 'cy');
    await sleep(100);
    const m = await send(ana, 'after changes');
    await sd.waitFor('message.new', isMsg(m.id));
    const side = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `side-cy-${Date.now()}`,
      created_by: 'ana',
      member_external_ids: ['cy'],
    });
    await sc.waitFor('channel.created', (e) => e?.channel_id === side.body.id); // her socket is in its room
    const toCy = (await ana.api.post(`/v1/channels/${side.body.id}/messages`, { content: 'control' })).body;
    await sc.expectNoneBefore('message.new', isMsg(m.id), ['message.new', isMsg(toCy.id)]);
    const created = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'fresh',
      created_by: 'ana',
      member_external_ids: ['dan'],
    });
    await sd.waitFor('channel.created', (e) => e?.channel_id === created.body.id);
    const m2 = await ana.api.post(`/v1/channels/fresh/messages`, { content: 'new room' });
    await sd.waitFor('message.new', isMsg(m2.body.id));
    await ws.api.delete('/v1/channels/fresh');
    await sd.waitFor('channel.deleted', (e) => e?.channel_id === created.body.id);
  });

  it('channel.updated, member.role_changed and channel.created carry their payloads', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    await ws.api.patch(`/v1/channels/${ch.id}`, { name: 'Renamed' });
    const upd = await sb.waitFor('channel.updated', (e) => e?.channel_id === ch.id);
    expect(upd).toMatchObject({
      v: 1,
      type: 'channel.updated',
      data: { channel: { id: ch.id, name: 'Renamed' } },
    });
    await ws.api.patch(`/v1/channels/${ch.id}/members/bo`, { role: 'admin' });
    const role = await sa.waitFor('member.role_changed', (e) => e?.data?.external_id === 'bo');
    expect(role.data).toMatchObject({ channel_id: ch.id, user_id: bo.id, external_id: 'bo', role: 'admin' });
    expect(role.seq).toBeGreaterThan(upd.seq);
    const created = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'another',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    const env = await sb.waitFor('channel.created', (e) => e?.channel_id === created.body.id);
    expect(env).toMatchObject({
      seq: 1,
      data: { channel: { id: created.body.id, member_count: 2, created_by: 'ana' } },
    });
  });

  it('presence: online while connected, offline with last_seen_at after, presence.changed to partners', async () => {
    const sa = await sock(ana);
    const sb = await sock(bo);
    await sa.waitFor('presence.changed', (e) => e?.data?.external_id === 'bo' && e.data.online === true);
    const p1 = await ws.api.get(`/v1/channels/${ch.id}/presence`);
    expect(p1.body.members.find((x: any) => x.external_id === 'bo').online).toBe(true);
    sb.close();
    const off = await sa.waitFor(
      'presence.changed',
      (e) => e?.data?.external_id === 'bo' && e.data.online === false,
    );
    expect(off.data.last_seen_at).toBeTruthy();
    const p2 = await ws.api.get(`/v1/channels/${ch.id}/presence`);
    expect(p2.body.members.find((x: any) => x.external_id === 'bo')).toMatchObject({ online: false });
  });

  it('typing starts, stops, and expires by itself', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    expect((await sa.emitAck('typing.start', { channel_id: ch.id })).ok).toBe(true);
    await sb.waitFor('typing.start', (e) => e?.data?.external_id === 'ana');
    // ana does not hear her own typing: bo's, emitted after it, is the control
    expect((await sb.emitAck('typing.start', { channel_id: ch.id })).ok).toBe(true);
    await sa.expectNoneBefore('typing.start', (e) => e?.data?.external_id === 'ana', [
      'typing.start',
      (e) => e?.data?.external_id === 'bo',
    ]);
    expect((await sb.emitAck('typing.stop', { channel_id: ch.id })).ok).toBe(true);
    expect((await sa.emitAck('typing.stop', { channel_id: ch.id })).ok).toBe(true);
    await sb.waitFor('typing.stop', (e) => e?.data?.external_id === 'ana');
  });

  it('typing.stop is sent after a few seconds without refresh', async () => {
    const [sa, sb] = await Promise.all([sock(ana), sock(bo)]);
    await sa.emitAck('typing.start', { channel_id: ch.id });
    await sb.waitFor('typing.stop', (e) => e?.data?.external_id === 'ana', 9000);
  }, 15000);
});
