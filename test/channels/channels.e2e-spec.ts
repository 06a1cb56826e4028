import { createHash } from 'crypto';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestWorkspace } from '../support/fixtures';

const roles = (ch: { members: { external_id: string; role: string | null }[] }) =>
  Object.fromEntries(ch.members.map((m) => [m.external_id, m.role]));
const dmId = (a: string, b: string) =>
  `dm_${createHash('sha256').update([a, b].sort().join('\n')).digest('hex').slice(0, 32)}`;

describe('channels and membership', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    await ws.users('ana', 'bo', 'cy', 'di');
  });

  const group = async (extra: Record<string, unknown> = {}) => {
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `g-${Math.random().toString(36).slice(2)}`,
      name: 'G',
      created_by: 'ana',
      member_external_ids: ['bo', 'cy'],
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body;
  };

  it('creates a group: created_by is admin, others members; GET by id and external_id', async () => {
    const ch = await group({ external_id: 'team', name: 'Team' });
    expect(ch).toMatchObject({
      type: 'group',
      external_id: 'team',
      name: 'Team',
      created_by: 'ana',
      member_count: 3,
      avatar_url: null,
    });
    expect(roles(ch)).toEqual({ ana: 'admin', bo: 'member', cy: 'member' });
    expect((await ws.api.get(`/v1/channels/${ch.id}`)).body.id).toBe(ch.id);
    expect((await ws.api.get('/v1/channels/team')).body.id).toBe(ch.id);
  });

  it('refuses a group without external_id, unknown users (naming them) and a duplicate external_id', async () => {
    const r1 = await ws.api.post('/v1/channels', { type: 'group', name: 'G', member_external_ids: ['bo'] });
    expect(r1.status).toBe(400);
    const r2 = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'g1',
      member_external_ids: ['bo', 'zed'],
    });
    expect(r2.status).toBe(400);
    expect(r2.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(r2.body.error)).toContain('zed');
    expect((await ws.api.get('/v1/channels/g1')).status).toBe(404);
    await group({ external_id: 'dup' });
    const r3 = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'dup',
      member_external_ids: ['bo'],
    });
    expect(r3.status).toBe(400);
  });

  it('direct channels: generated dm_ id, idempotent in either order, null roles, immutable', async () => {
    const first = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['bo', 'ana'] });
    expect(first.status).toBe(201);
    expect(first.body.external_id).toBe(dmId('ana', 'bo'));
    expect(roles(first.body)).toEqual({ ana: null, bo: null });
    const again = await ws.api.post('/v1/channels', {
      type: 'direct',
      created_by: 'bo',
      member_external_ids: ['ana'],
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(
      (await ws.api.post(`/v1/channels/${first.body.id}/members`, { member_external_ids: ['cy'] })).status,
    ).toBe(400);
    expect(
      (await ws.api.patch(`/v1/channels/${first.body.id}`, { avatar_url: 'https://x.example/a.png' })).status,
    ).toBe(400);
    for (const bad of [
      ['ana', 'bo', 'cy'],
      ['ana', 'ana'],
    ]) {
      expect((await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: bad })).status).toBe(
        400,
      );
    }
    const list = await ws.api.get('/v1/channels?type=direct&member=ana');
    expect(list.body.channels.map((c: { id: string }) => c.id)).toEqual([first.body.id]);
  });

  it('members: add is a no-op for existing members, remove by body and path, roles and LAST_ADMIN', async () => {
    const ch = await group();
    expect((await ws.api.patch(`/v1/channels/${ch.id}/members/bo`, { role: 'admin' })).status).toBe(200);
    const added = await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['bo', 'di'] });
    expect(added.status).toBe(200);
    expect(roles(added.body)).toEqual({ ana: 'admin', bo: 'admin', cy: 'member', di: 'member' });
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/di`)).status).toBe(204);
    expect(
      (await ws.api.delete(`/v1/channels/${ch.id}/members`, { member_external_ids: ['cy'] })).status,
    ).toBe(204);
    expect((await ws.api.patch(`/v1/channels/${ch.id}/members/bo`, { role: 'member' })).status).toBe(200);
    const last = await ws.api.patch(`/v1/channels/${ch.id}/members/ana`, { role: 'member' });
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('LAST_ADMIN');
  });

  it('when the last admin leaves, the earliest-joined remaining member becomes admin', async () => {
    const ch = await group();
    const [ana] = await Promise.all([ws.user('ana')]);
    expect((await ana.api.delete(`/v1/me/channels/${ch.id}/members/ana`)).status).toBe(204);
    const got = await ws.api.get(`/v1/channels/${ch.id}`);
    expect(roles(got.body)).toEqual({ bo: 'admin', cy: 'member' });
  });

  it('/v1/me routes: non-admins get 403 FORBIDDEN, non-members 403 NOT_A_MEMBER, admins manage', async () => {
    const ch = await group({ name: 'Keep' });
    const [ana, bo, di] = await ws.users('ana', 'bo', 'di');
    const base = `/v1/me/channels/${ch.id}`;
    for (const res of [
      await bo!.api.patch(base, { name: 'Hacked' }),
      await bo!.api.post(`${base}/members`, { member_external_ids: ['di'] }),
      await bo!.api.delete(`${base}/members/cy`),
      await bo!.api.patch(`${base}/members/bo`, { role: 'admin' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    const outsider = await di!.api.patch(base, { name: 'x' });
    expect(outsider.body.error.code).toBe('NOT_A_MEMBER');
    expect((await ana!.api.patch(base, { name: 'After' })).body.name).toBe('After');
    expect((await ana!.api.patch(`${base}/members/cy`, { role: 'admin' })).status).toBe(200);
    expect((await bo!.api.delete(`${base}/members/bo`)).status).toBe(204);
    expect(roles((await ws.api.get(`/v1/channels/${ch.id}`)).body)).toEqual({ ana: 'admin', cy: 'admin' });
  });

  it('a user JWT cannot call backend channel routes', async () => {
    const ana = await ws.user('ana');
    const res = await ana.api.post('/v1/channels', {
      type: 'group',
      external_id: 'x',
      member_external_ids: ['ana'],
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('delete cascades and answers 404 afterwards', async () => {
    const ch = await group();
    expect((await ws.api.delete(`/v1/channels/${ch.id}`)).status).toBe(204);
    expect((await ws.api.get(`/v1/channels/${ch.id}`)).status).toBe(404);
    expect((await ws.api.delete(`/v1/channels/${ch.id}`)).status).toBe(404);
  });

  it('lists with filters and keyset pages', async () => {
    for (let i = 0; i < 5; i++) await group();
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const res = await ws.api.get(`/v1/channels?limit=2${before ? `&before=${before}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.channels.map((c: { id: string }) => c.id));
      if (!res.body.has_more) {
        expect(res.body.next_cursor).toBeNull();
        break;
      }
      before = res.body.next_cursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect((await ws.api.get('/v1/channels?before=garbage')).status).toBe(400);
  });

  it('receipts: read advances delivered, cursors never move back, non-members 403', async () => {
    const ch = await group();
    const [bo, di] = await ws.users('bo', 'di');
    const d = await bo!.api.post(`/v1/channels/${ch.id}/delivered`);
    expect(d.status).toBe(200);
    const r = await bo!.api.post(`/v1/channels/${ch.id}/read`);
    expect(Date.parse(r.body.last_delivered_at)).toBeGreaterThanOrEqual(Date.parse(r.body.last_read_at));
    const d2 = await bo!.api.post(`/v1/channels/${ch.id}/delivered`);
    expect(Date.parse(d2.body.last_read_at)).toBe(Date.parse(r.body.last_read_at));
    const list = await bo!.api.get(`/v1/channels/${ch.id}/receipts`);
    expect(list.body.members.find((m: { external_id: string }) => m.external_id === 'bo').last_read_at).toBe(
      r.body.last_read_at,
    );
    expect((await di!.api.get(`/v1/channels/${ch.id}/receipts`)).body.error.code).toBe('NOT_A_MEMBER');
    expect((await ws.api.post(`/v1/channels/${ch.id}/read`, { user_external_id: 'cy' })).status).toBe(200);
    expect((await ws.api.post(`/v1/channels/${ch.id}/read`)).status).toBe(400);
  });

  it('presence lists members with role, online and last_seen_at', async () => {
    const ch = await group();
    const res = await ws.api.get(`/v1/channels/${ch.external_id}/presence`);
    expect(res.status).toBe(200);
    expect(res.body.members).toHaveLength(3);
    expect(res.body.members[0]).toEqual({
      external_id: 'ana',
      role: 'admin',
      online: false,
      last_seen_at: null,
    });
  });

  it('workspace B never sees or changes A channels', async () => {
    const ch = await group({ external_id: 'secret', name: 'A secret' });
    const b = await newWorkspace(t);
    await b.users('ana', 'bo');
    for (const ref of [ch.id, 'secret']) {
      expect((await b.api.get(`/v1/channels/${ref}`)).status).toBe(404);
      expect((await b.api.patch(`/v1/channels/${ref}`, { name: 'pwned' })).status).toBe(404);
      expect((await b.api.post(`/v1/channels/${ref}/members`, { member_external_ids: ['bo'] })).status).toBe(
        404,
      );
      expect((await b.api.delete(`/v1/channels/${ref}`)).status).toBe(404);
      expect((await b.api.get(`/v1/channels/${ref}/receipts`)).status).toBe(404);
    }
    expect((await b.api.get('/v1/channels')).body.channels).toEqual([]);
    expect((await ws.api.get('/v1/channels/secret')).body.name).toBe('A secret');
  });

  it('writes channel.created and member events with contiguous seq', async () => {
    const ch = await group();
    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di'] });
    await ws.api.delete(`/v1/channels/${ch.id}/members/di`);
    const { DataSource } = await import('typeorm');
    const rows: { type: string; seq: number }[] = await t.app
      .get(DataSource)
      .query(`SELECT type, seq FROM events WHERE channel_id = $1 ORDER BY seq`, [ch.id]);
    expect(rows).toEqual([
      { type: 'channel.created', seq: 1 },
      { type: 'member.joined', seq: 2 },
      { type: 'member.left', seq: 3 },
    ]);
  });
});
