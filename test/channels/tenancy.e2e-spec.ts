import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/**
 * Workspace B's credentials never reach workspace A's channels through any channel, membership, role,
 * presence or receipt route: always 404 (never a hint that the channel exists elsewhere), and A's
 * channel is unchanged afterwards. B has users with the same external ids as A's members.
 */
describe('tenant isolation of channel routes', () => {
  let t: TestApp;
  let a: TestWorkspace;
  let b: TestWorkspace;
  let bAna: TestUser;
  let ch: { id: string; external_id: string };
  let receiptsBefore: unknown;
  const NAME = 'tenant-a-secret-name';

  beforeAll(async () => {
    t = await startTestApp();
    a = await newWorkspace(t);
    await a.users('ana', 'bo', 'cy');
    ch = (
      await a.api.post('/v1/channels', {
        type: 'group',
        external_id: 'team-a',
        name: NAME,
        created_by: 'ana',
        member_external_ids: ['bo', 'cy'],
      })
    ).body;
    receiptsBefore = (await a.api.get(`/v1/channels/${ch.id}/receipts`)).body;
    b = await newWorkspace(t);
    bAna = await b.user('ana');
    await b.users('bo', 'di');
  });
  afterAll(async () => t.close());

  const backendRoutes = (ref: string): [string, string, unknown][] => [
    ['get', `/v1/channels/${ref}`, undefined],
    ['patch', `/v1/channels/${ref}`, { name: 'pwned' }],
    ['post', `/v1/channels/${ref}/members`, { member_external_ids: ['di'] }],
    ['delete', `/v1/channels/${ref}/members`, { member_external_ids: ['bo'] }],
    ['delete', `/v1/channels/${ref}/members/bo`, undefined],
    ['patch', `/v1/channels/${ref}/members/bo`, { role: 'admin' }],
    ['patch', `/v1/channels/${ref}/members/ana`, { role: 'member' }],
    ['get', `/v1/channels/${ref}/presence`, undefined],
    ['get', `/v1/channels/${ref}/receipts`, undefined],
    ['post', `/v1/channels/${ref}/read`, { user_external_id: 'bo' }],
    ['post', `/v1/channels/${ref}/delivered`, { user_external_id: 'bo' }],
    ['delete', `/v1/channels/${ref}`, undefined],
  ];
  const userRoutes = (ref: string): [string, string, unknown][] => [
    ['patch', `/v1/me/channels/${ref}`, { name: 'pwned' }],
    ['post', `/v1/me/channels/${ref}/members`, { member_external_ids: ['bo'] }],
    ['delete', `/v1/me/channels/${ref}/members`, { member_external_ids: ['bo'] }],
    ['delete', `/v1/me/channels/${ref}/members/bo`, undefined],
    ['delete', `/v1/me/channels/${ref}/members/ana`, undefined],
    ['patch', `/v1/me/channels/${ref}/members/bo`, { role: 'admin' }],
    ['get', `/v1/channels/${ref}/presence`, undefined],
    ['get', `/v1/channels/${ref}/receipts`, undefined],
    ['post', `/v1/channels/${ref}/read`, {}],
    ['post', `/v1/channels/${ref}/delivered`, {}],
  ];

  it("B's workspace key gets 404 on every channel route of A's channel, by id and external_id", async () => {
    for (const ref of [ch.id, ch.external_id]) {
      for (const [method, path, body] of backendRoutes(ref)) {
        const res = await b.api.req(method as 'get', path, body);
        expectError(res, 404, 'NOT_FOUND');
        expect(res.text).not.toContain(NAME);
      }
    }
  });

  it("a B user token (same external id as A's admin) gets 404 on every member route of A's channel", async () => {
    for (const ref of [ch.id, ch.external_id]) {
      for (const [method, path, body] of userRoutes(ref)) {
        const res = await bAna.api.req(method as 'get', path, body);
        expectError(res, 404, 'NOT_FOUND');
        expect(res.text).not.toContain(NAME);
      }
    }
  });

  it("lists never show A's channels to B", async () => {
    expect((await b.api.get('/v1/channels')).body.channels).toEqual([]);
    expect((await b.api.get('/v1/channels?member=ana')).body.channels).toEqual([]);
    expect((await bAna.api.get('/v1/me/channels')).body.channels).toEqual([]);
  });

  it("B cannot create channels with A's users, nor mute or block them", async () => {
    const res = await b.api.post('/v1/channels', {
      type: 'group',
      external_id: 'x',
      member_external_ids: ['cy'],
    });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(res.body)).toContain('cy');
    expectError(
      await b.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'cy'] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await b.api.delete('/v1/users/cy/mute'), 404, 'NOT_FOUND');
    expectError(await b.api.delete('/v1/users/cy'), 404, 'NOT_FOUND');
    expectError(await bAna.api.delete('/v1/me/blocks/cy'), 404, 'NOT_FOUND');
    expectError(await bAna.api.delete('/v1/me/blocks', { external_id: 'cy' }), 404, 'NOT_FOUND');
  });

  it("A's channel, roles and cursors are untouched afterwards", async () => {
    const got = await a.api.get(`/v1/channels/${ch.id}`);
    expect(got.status).toBe(200);
    expect(got.body.name).toBe(NAME);
    expect(
      got.body.members.map((m: { external_id: string; role: string }) => [m.external_id, m.role]),
    ).toEqual([
      ['ana', 'admin'],
      ['bo', 'member'],
      ['cy', 'member'],
    ]);
    expect((await a.api.get(`/v1/channels/${ch.id}/receipts`)).body).toEqual(receiptsBefore);
  });
});
