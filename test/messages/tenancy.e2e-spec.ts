import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { history, room, Room, send } from './helpers';

/** Workspace B's credentials never reach workspace A's messages: always 404, never a hint that they exist. */
describe('tenant isolation of message routes', () => {
  let t: TestApp;
  let a: Room;
  let b: TestWorkspace;
  let bAna: TestUser;
  let msgId: string;
  const SECRET = 'tenant-a-secret';

  beforeAll(async () => {
    t = await startTestApp();
    a = await room(t);
    b = await newWorkspace(t);
    bAna = await b.user('ana', 'Ana');
    await b.user('bo');
    msgId = (await send(a.ana, a.ch.id, `${SECRET} message`)).id;
  });
  afterAll(async () => t.close());

  const routes = (): [string, string, Record<string, unknown> | undefined][] => [
    ['get', `/v1/channels/${a.ch.id}/messages`, undefined],
    ['get', `/v1/channels/${a.ch.external_id}/messages`, undefined],
    ['post', `/v1/channels/${a.ch.id}/messages`, { content: 'pwned', user_external_id: 'ana' }],
    ['post', '/v1/messages', { channel_id: a.ch.id, content: 'pwned', system: true }],
    ['post', '/v1/messages', { channel_id: a.ch.external_id, content: 'pwned', user_external_id: 'ana' }],
    ['patch', `/v1/messages/${msgId}`, { content: 'pwned' }],
    ['delete', `/v1/messages/${msgId}`, undefined],
    ['post', `/v1/messages/${msgId}/reactions`, { emoji: '💀', user_external_id: 'ana' }],
    ['delete', `/v1/messages/${msgId}/reactions/${encodeURIComponent('💀')}?user_external_id=ana`, undefined],
  ];

  it("B's workspace key gets 404 on every route of A's channel and message", async () => {
    for (const [method, path, body] of routes()) {
      const res = await b.api.req(method as 'get', path, body);
      expectError(res, 404, 'NOT_FOUND');
      expect(res.text).not.toContain(SECRET);
    }
  });

  it('a B user token gets 404 too (same external id as an A member, different tenant)', async () => {
    for (const [method, path, body] of routes()) {
      if (path === '/v1/messages') continue; // backend-only route: 403 for any user token
      const strip = body ? { ...body } : undefined;
      if (strip) delete strip.user_external_id;
      const res = await bAna.api.req(method as 'get', path.replace('?user_external_id=ana', ''), strip);
      expectError(res, 404, 'NOT_FOUND');
    }
  });

  it("A's message is untouched afterwards", async () => {
    const h = await history(a.ws.api, a.ch.id);
    expect(h.messages.map((m) => [m.content, m.deleted_at, m.reactions])).toEqual([
      [`${SECRET} message`, null, []],
    ]);
  });

  it('mutes and blocks do not cross workspaces', async () => {
    expectError(await b.api.post('/v1/users/cy/mute', {}), 404, 'NOT_FOUND');
    expectError(await bAna.api.post('/v1/me/blocks', { external_id: 'cy' }), 404, 'NOT_FOUND');
    // B mutes its own bo: A's bo still sends
    expect((await b.api.post('/v1/users/bo/mute', {})).status).toBe(200);
    expect((await a.bo.api.post(`/v1/channels/${a.ch.id}/messages`, { content: 'A bo' })).status).toBe(201);
    // B's ana blocks B's bo: A's ana still sees A's bo
    expect((await bAna.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
    expect((await history(a.ana.api, a.ch.id)).messages.map((m) => m.content)).toContain('A bo');
  });
});
