import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { closeAllSockets, connectSocket } from '../support/socket';
import { eventsOf, history, room, send, sleep } from '../messages/helpers';

/** CONTRACT §17: frozen, slow mode, channel and message metadata, the metadata filter, channel.updated. */
describe('channel controls and custom data (CONTRACT §17)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  describe('frozen', () => {
    it("refuses users' send, edit, react and unsend with 403 CHANNEL_FROZEN; the backend and system pass; reads and receipts work", async () => {
      const { ws, ch, ana, bo } = await room(t);
      const m = await send(bo, ch.id, 'before the freeze');
      const up = await ws.api.patch(`/v1/channels/${ch.id}`, { frozen: true });
      expect([up.status, up.body.frozen]).toEqual([200, true]);
      expectError(
        await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'x' }),
        403,
        'CHANNEL_FROZEN',
      );
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'admin' }),
        403,
        'CHANNEL_FROZEN',
      );
      expectError(await bo.api.patch(`/v1/messages/${m.id}`, { content: 'edited' }), 403, 'CHANNEL_FROZEN');
      expectError(
        await ana.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }),
        403,
        'CHANNEL_FROZEN',
      );
      expectError(await bo.api.delete(`/v1/messages/${m.id}`), 403, 'CHANNEL_FROZEN');
      const viaSocket = await connectSocket(t.baseUrl, bo.token);
      const ack = await viaSocket.emitAck('message.send', { channel_id: ch.id, content: 'socket' });
      expect([ack.ok, ack.error?.code]).toEqual([false, 'CHANNEL_FROZEN']);

      // the backend acts as itself or for a user; system messages go through
      const forBo = await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'for bo',
        user_external_id: 'bo',
      });
      const system = await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'notice',
        system: true,
      });
      const edited = await ws.api.patch(`/v1/messages/${m.id}`, { content: 'moderated' });
      expect([forBo.status, system.status, edited.status]).toEqual([201, 201, 200]);
      expect((await bo.api.post(`/v1/channels/${ch.id}/read`, {})).status).toBeLessThan(300);
      expect((await history(bo.api, ch.id)).messages.map((x) => x.content)).toEqual([
        'notice',
        'for bo',
        'moderated',
      ]);

      // a group admin unfreezes through /v1/me; a plain member may not
      expectError(await bo.api.patch(`/v1/me/channels/${ch.id}`, { frozen: false }), 403, 'FORBIDDEN');
      const thawed = await ana.api.patch(`/v1/me/channels/${ch.id}`, { frozen: false });
      expect([thawed.status, thawed.body.frozen]).toEqual([200, false]);
      expect((await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'thawed' })).status).toBe(201);
    });
  });

  describe('slow mode', () => {
    it('429 SLOW_MODE with Retry-After for a second send within the window; per member; admins and the backend exempt', async () => {
      const { ws, ch, ana, bo, cy } = await room(t);
      const up = await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 2 });
      expect([up.status, up.body.slow_mode_seconds]).toEqual([200, 2]);
      await send(bo, ch.id, 'first');
      const refused = await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'too soon' });
      expectError(refused, 429, 'SLOW_MODE');
      expect(['1', '2']).toContain(refused.headers['retry-after']);
      await send(cy, ch.id, 'cy is not bo');
      await send(ana, ch.id, 'admin one');
      await send(ana, ch.id, 'admin two'); // the group admin is exempt
      const forBo = await ws.api.post(`/v1/channels/${ch.id}/messages`, {
        content: 'backend for bo',
        user_external_id: 'bo',
      });
      expect(forBo.status).toBe(201); // backend sends are exempt
      await sleep(2100);
      await send(bo, ch.id, 'patience');
      expect((await history(ws.api, ch.id)).messages.map((x) => x.content)).toEqual([
        'patience',
        'backend for bo',
        'admin two',
        'admin one',
        'cy is not bo',
        'first',
      ]);
    });

    it('is 0..3600 on groups and refused on direct channels, which take frozen and metadata', async () => {
      const { ws, ch } = await room(t);
      expectError(
        await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 3601 }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: -1 }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 1.5 }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await ws.api.get(`/v1/channels/${ch.id}`)).body.slow_mode_seconds).toBe(0);
      const dm = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] });
      expectError(
        await ws.api.patch(`/v1/channels/${dm.body.id}`, { slow_mode_seconds: 5 }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ws.api.post('/v1/channels', {
          type: 'direct',
          member_external_ids: ['ana', 'cy'],
          slow_mode_seconds: 5,
        }),
        400,
        'VALIDATION_ERROR',
      );
      const d = await ws.api.patch(`/v1/channels/${dm.body.id}`, { frozen: true, metadata: { deal: 'd-1' } });
      expect([d.status, d.body.frozen, d.body.metadata]).toEqual([200, true, { deal: 'd-1' }]);
    });
  });

  describe('metadata', () => {
    it('channel metadata: {} by default, set on create and PATCH, objects of at most 4 KiB only', async () => {
      const { ws, ch, ana, bo } = await room(t);
      const plain = await ws.api.get(`/v1/channels/${ch.id}`);
      expect([plain.body.frozen, plain.body.slow_mode_seconds, plain.body.metadata]).toEqual([false, 0, {}]);
      const made = await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: `meta-${Date.now()}`,
        created_by: 'ana',
        member_external_ids: ['bo'],
        metadata: { team: 'red' },
      });
      expect([made.status, made.body.metadata]).toEqual([201, { team: 'red' }]);
      const byAdmin = await ana.api.patch(`/v1/me/channels/${made.body.id}`, { metadata: { team: 'green' } });
      expect([byAdmin.status, byAdmin.body.metadata]).toEqual([200, { team: 'green' }]);
      expectError(
        await bo.api.patch(`/v1/me/channels/${made.body.id}`, { metadata: { team: 'mine' } }),
        403,
        'FORBIDDEN',
      );
      for (const metadata of [{ blob: 'x'.repeat(5000) }, ['a'], 'text', null]) {
        expectError(
          await ws.api.patch(`/v1/channels/${made.body.id}`, { metadata }),
          400,
          'VALIDATION_ERROR',
        );
      }
      expect((await ws.api.get(`/v1/channels/${made.body.id}`)).body.metadata).toEqual({ team: 'green' });
    });

    it('message metadata on send and edit, in history, realtime and the event log; unsend blanks it', async () => {
      const { ch, ana, bo } = await room(t);
      const sock = await connectSocket(t.baseUrl, bo.token);
      const meta = { order_id: 'o-42' };
      const m = await send(ana, ch.id, { content: 'your order', metadata: meta });
      expect((m as unknown as { metadata: unknown }).metadata).toEqual(meta);
      const plain = await send(ana, ch.id, 'no data');
      expect((plain as unknown as { metadata: unknown }).metadata).toEqual({});
      const live = await sock.waitFor('message.new', (e) => e.data.id === m.id);
      expect(live.data.metadata).toEqual(meta);
      const edited = await ana.api.patch(`/v1/messages/${m.id}`, {
        content: 'your order (fixed)',
        metadata: { order_id: 'o-43' },
      });
      expect([edited.status, edited.body.metadata]).toEqual([200, { order_id: 'o-43' }]);
      const upd = await sock.waitFor('message.updated', (e) => e.data.id === m.id);
      expect(upd.data.metadata).toEqual({ order_id: 'o-43' });
      // an edit without metadata keeps it
      expect((await ana.api.patch(`/v1/messages/${m.id}`, { content: 'again' })).body.metadata).toEqual({
        order_id: 'o-43',
      });
      const log = await eventsOf(t, ch.id);
      const created = log.find(
        (e) => e.type === 'message.created' && (e.payload.message as { id: string }).id === m.id,
      )!;
      expect((created.payload.message as { metadata: unknown }).metadata).toEqual(meta);
      expectError(
        await ana.api.post(`/v1/channels/${ch.id}/messages`, {
          content: 'big',
          metadata: { b: 'x'.repeat(5000) },
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ana.api.patch(`/v1/messages/${m.id}`, { content: 'big', metadata: ['x'] }),
        400,
        'VALIDATION_ERROR',
      );
      const gone = await ana.api.delete(`/v1/messages/${m.id}`);
      expect([gone.body.content, gone.body.metadata]).toEqual(['', {}]);
      const h = (await history(bo.api, ch.id)).messages.find((x) => x.id === m.id) as unknown as {
        metadata: unknown;
      };
      expect(h.metadata).toEqual({});
    });

    it('GET /v1/channels?metadata.<key>=<value>: exact string equality, combinable, at most 3 filters', async () => {
      const { ws } = await room(t);
      const mk = async (body: Record<string, unknown>) =>
        (await ws.api.post('/v1/channels', body)).body.id as string;
      const suffix = Date.now();
      const g1 = await mk({
        type: 'group',
        external_id: `g1-${suffix}`,
        created_by: 'ana',
        member_external_ids: ['bo'],
        metadata: { team: 'red', tier: 'gold', n: 1 },
      });
      await mk({ type: 'group', external_id: `g2-${suffix}`, created_by: 'ana', metadata: { team: 'blue' } });
      const g3 = await mk({
        type: 'group',
        external_id: `g3-${suffix}`,
        created_by: 'cy',
        metadata: { team: 'red' },
      });
      const dm = await mk({ type: 'direct', member_external_ids: ['ana', 'cy'], metadata: { team: 'red' } });
      const ids = async (q: string) => {
        const res = await ws.api.get(`/v1/channels?${q}`);
        expect(res.status).toBe(200);
        return (res.body.channels as { id: string }[]).map((c) => c.id).sort();
      };
      expect(await ids('metadata.team=red')).toEqual([g1, g3, dm].sort());
      expect(await ids('metadata.team=red&metadata.tier=gold')).toEqual([g1]);
      expect(await ids('metadata.team=red&type=group')).toEqual([g1, g3].sort());
      expect(await ids('metadata.team=red&member=bo')).toEqual([g1]);
      expect(await ids('metadata.team=Red')).toEqual([]);
      expect(await ids('metadata.n=1')).toEqual([]); // a number is not the string "1"
      expectError(
        await ws.api.get('/v1/channels?metadata.a=1&metadata.b=2&metadata.c=3&metadata.d=4'),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await ws.api.get('/v1/channels?metadata.=x'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/channels?metadata.team=a&metadata.team=b'), 400, 'VALIDATION_ERROR');
      expectError(await ws.api.get('/v1/channels?colour=red'), 400, 'VALIDATION_ERROR');
    });
  });

  it('every change of frozen, slow mode or metadata logs channel.updated with the whole channel', async () => {
    const { ws, ch } = await room(t);
    await ws.api.patch(`/v1/channels/${ch.id}`, { frozen: true });
    await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 30 });
    await ws.api.patch(`/v1/channels/${ch.id}`, { metadata: { topic: 'launch' } });
    const updates = (await eventsOf(t, ch.id)).filter((e) => e.type === 'channel.updated');
    const seen = updates.map((e) => {
      const c = e.payload.channel as { frozen: boolean; slow_mode_seconds: number; metadata: unknown };
      return [c.frozen, c.slow_mode_seconds, c.metadata];
    });
    expect(seen).toEqual([
      [true, 0, {}],
      [true, 30, {}],
      [true, 30, { topic: 'launch' }],
    ]);
  });

  it('OpenAPI documents the channel fields, the message metadata and the new error codes', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; enum?: string[] }> };
    };
    const { schemas } = doc.components;
    expect(Object.keys(schemas.Channel!.properties!)).toEqual(
      expect.arrayContaining(['frozen', 'slow_mode_seconds', 'metadata']),
    );
    expect(JSON.stringify(doc.paths['/v1/channels/{id}']!.patch!.responses!['200'])).toContain(
      '#/components/schemas/Channel"',
    );
    for (const dto of ['CreateChannelDto', 'UpdateChannelDto'])
      expect(Object.keys(schemas[dto]!.properties!)).toEqual(
        expect.arrayContaining(['frozen', 'slow_mode_seconds', 'metadata']),
      );
    expect(Object.keys(schemas.Message!.properties!)).toContain('metadata');
    expect(JSON.stringify(doc)).toContain('CHANNEL_FROZEN');
    expect(JSON.stringify(doc)).toContain('SLOW_MODE');
  });

  it('text PostgreSQL cannot store (a NUL byte) is 400 VALIDATION_ERROR, never a 500, and nothing is stored', async () => {
    const { ws, ch, ana } = await room(t);
    const m = await send(ana, ch.id, 'kept');
    const refused = [
      () => ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'a\u0000b' }),
      () => ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'ok', metadata: { k: 'a\u0000b' } }),
      () => ana.api.patch(`/v1/messages/${m.id}`, { content: 'x', metadata: { k: '\u0000' } }),
      () => ws.api.patch(`/v1/channels/${ch.id}`, { metadata: { k: '\u0000' } }),
    ];
    for (const call of refused) expectError(await call(), 400, 'VALIDATION_ERROR');
    expect((await history(ana.api, ch.id)).messages.map((x) => [x.content, x.edited_at])).toEqual([
      ['kept', null],
    ]);
    expect((await ws.api.get(`/v1/channels/${ch.id}`)).body.metadata).toEqual({});
  });
});
