import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { group, history, room, send, sleep } from './helpers';

describe('blocks (user JWT, workspace-wide)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it("a block hides the blocked user's messages from the blocker's history in every channel; unblocking restores them", async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const other = await group(ws, 'cy', ['ana', 'bo']);
    await send(bo, ch.id, 'bo in the group');
    await send(cy, ch.id, 'cy in the group');
    await send(bo, other.id, 'bo elsewhere');
    await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'system', system: true });
    const res = await ana.api.post('/v1/me/blocks', { external_id: 'bo' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ external_id: 'bo', created_at: expect.any(String) });
    expect((await history(ana.api, ch.id)).messages.map((m) => m.content)).toEqual([
      'system',
      'cy in the group',
    ]);
    expect((await history(ana.api, other.id)).messages).toEqual([]);
    // others and the backend still see everything
    expect((await history(cy.api, ch.id)).messages).toHaveLength(3);
    expect((await history(ws.api, ch.id)).messages).toHaveLength(3);
    expect((await ana.api.delete('/v1/me/blocks/bo')).status).toBe(204);
    expect((await history(ana.api, ch.id)).messages).toHaveLength(3);
  });

  it('blocking is idempotent (201 then 200), self is 400, unknown is 404; both unblock forms are 204', async () => {
    const { ana } = await room(t);
    expectError(await ana.api.post('/v1/me/blocks', { external_id: 'ana' }), 400, 'VALIDATION_ERROR');
    expectError(await ana.api.post('/v1/me/blocks', { external_id: 'ghost' }), 404, 'NOT_FOUND');
    expectError(await ana.api.post('/v1/me/blocks', {}), 400, 'VALIDATION_ERROR');
    const first = await ana.api.post('/v1/me/blocks', { external_id: 'bo' });
    const again = await ana.api.post('/v1/me/blocks', { external_id: 'bo' });
    expect([first.status, again.status, again.body.created_at]).toEqual([201, 200, first.body.created_at]);
    expect((await ana.api.delete('/v1/me/blocks', { external_id: 'bo' })).status).toBe(204);
    expect((await ana.api.delete('/v1/me/blocks', { external_id: 'bo' })).status).toBe(204);
    expect((await ana.api.delete('/v1/me/blocks/cy')).status).toBe(204);
    expectError(await ana.api.delete('/v1/me/blocks/ghost'), 404, 'NOT_FOUND');
    expectError(await ana.api.delete('/v1/me/blocks'), 400, 'VALIDATION_ERROR');
    expect((await ana.api.get('/v1/me/blocks')).body).toEqual({
      blocks: [],
      has_more: false,
      next_cursor: null,
    });
  });

  it('GET /v1/me/blocks lists newest first and pages with limit/before', async () => {
    const { ws, ana } = await room(t);
    const names = ['u1', 'u2', 'u3', 'u4', 'u5'];
    for (const n of names) {
      await ws.user(n);
      expect((await ana.api.post('/v1/me/blocks', { external_id: n })).status).toBe(201);
    }
    const p1 = await ana.api.get('/v1/me/blocks?limit=2');
    expect(p1.body.blocks.map((b: { external_id: string }) => b.external_id)).toEqual(['u5', 'u4']);
    expect(p1.body.has_more).toBe(true);
    const p2 = await ana.api.get(`/v1/me/blocks?limit=2&before=${p1.body.next_cursor}`);
    const p3 = await ana.api.get(`/v1/me/blocks?limit=2&before=${p2.body.next_cursor}`);
    expect([...p2.body.blocks, ...p3.body.blocks].map((b: { external_id: string }) => b.external_id)).toEqual(
      ['u3', 'u2', 'u1'],
    );
    expect([p3.body.has_more, p3.body.next_cursor]).toEqual([false, null]);
    expectError(await ana.api.get('/v1/me/blocks?before=junk'), 400, 'VALIDATION_ERROR');
  });

  it('blocks are for user tokens only', async () => {
    const { ws } = await room(t);
    expectError(await ws.api.get('/v1/me/blocks'), 403, 'FORBIDDEN');
    expectError(await ws.api.post('/v1/me/blocks', { external_id: 'bo' }), 403, 'FORBIDDEN');
  });
});

describe('mutes (backend key, workspace-wide)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('a muted user gets 403 MUTED in every channel, also through the backend; unmuting (204) restores sending', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const dm = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] });
    const mute = await ws.api.post('/v1/users/bo/mute', { reason: 'cool down' });
    expect(mute.status).toBe(200);
    expect(mute.body).toMatchObject({ external_id: 'bo', muted_until: null, reason: 'cool down' });
    expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'hello?' }), 403, 'MUTED');
    expectError(
      await bo.api.post(`/v1/channels/${dm.body.id}/messages`, { content: 'hello?' }),
      403,
      'MUTED',
    );
    expectError(
      await ws.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x', user_external_id: 'bo' }),
      403,
      'MUTED',
    );
    await send(ana, ch.id, 'ana is not muted');
    // system messages are never muted
    expect(
      (await ws.api.post('/v1/messages', { channel_id: ch.id, content: 'sys', system: true })).status,
    ).toBe(201);
    expect((await ws.api.delete('/v1/users/bo/mute')).status).toBe(204);
    expect((await ws.api.delete('/v1/users/bo/mute')).status).toBe(204);
    await send(bo, ch.id, 'back');
    expect((await history(ws.api, ch.id)).messages).toHaveLength(3);
  });

  it('a mute with duration_seconds expires by itself; a new mute replaces the old one', async () => {
    const { ws, ch, bo } = await room(t);
    const mute = await ws.api.post('/v1/users/bo/mute', { duration_seconds: 1 });
    expect(Date.parse(mute.body.muted_until)).toBeGreaterThan(Date.now() - 5000);
    expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'early' }), 403, 'MUTED');
    await sleep(1200);
    await send(bo, ch.id, 'after expiry');
    await ws.api.post('/v1/users/bo/mute', { duration_seconds: 1 });
    const forever = await ws.api.post('/v1/users/bo/mute', {});
    expect(forever.body.muted_until).toBeNull();
    await sleep(1200);
    expectError(
      await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'still muted' }),
      403,
      'MUTED',
    );
  });

  it('validates the body and the user; user tokens may not mute', async () => {
    const { ws, bo } = await room(t);
    for (const body of [
      { duration_seconds: 0 },
      { duration_seconds: 1.5 },
      { duration_seconds: '60' },
      { reason: 5 },
      { until: 'x' },
    ]) {
      expectError(await ws.api.post('/v1/users/bo/mute', body), 400, 'VALIDATION_ERROR');
    }
    expectError(await ws.api.post('/v1/users/ghost/mute', {}), 404, 'NOT_FOUND');
    expectError(await ws.api.delete('/v1/users/ghost/mute'), 404, 'NOT_FOUND');
    expectError(await bo.api.post('/v1/users/ana/mute', {}), 403, 'FORBIDDEN');
  });
});
