import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Client, newWorkspace, TestWorkspace, userToken } from '../support/fixtures';
import { forgeJwt, nowSeconds } from '../support/jwt';

/**
 * CONTRACT §3. A user JWT that is accepted gets 403 on a backend-only route (authenticated, wrong kind);
 * a refused one gets 401. That difference is the probe for every attack below.
 */
describe('authentication (CONTRACT §3)', () => {
  let t: TestApp;
  let a: TestWorkspace;
  let b: TestWorkspace;

  beforeAll(async () => {
    t = await startTestApp();
    a = await newWorkspace(t, 'A');
    b = await newWorkspace(t, 'B');
    await a.user('ana');
    await b.user('bo');
  });
  afterAll(async () => t.close());

  const withAuth = (authorization: string | null) => new Client(t, authorization);
  const probe = (token: string) => withAuth(`Bearer ${token}`).get('/v1/workspace');
  const claims = (over: Record<string, unknown> = {}) => {
    const iat = nowSeconds();
    return { sub: 'ana', iat, exp: iat + 3600, ...over };
  };
  const hs256 = (over: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
    forgeJwt({ alg: 'HS256', typ: 'JWT', kid: a.apiKey, ...header }, claims(over), a.apiSecret);

  describe('user JWT', () => {
    it('accepts a well-formed HS256 token (403 on a backend route, not 401)', async () => {
      expectError(await probe(hs256()), 403, 'FORBIDDEN');
      expectError(await probe(userToken(a.apiKey, a.apiSecret, 'ana')), 403, 'FORBIDDEN');
    });

    it('accepts a lifetime of exactly 86400 s', async () => {
      const iat = nowSeconds();
      expectError(await probe(hs256({ iat, exp: iat + 86_400 })), 403, 'FORBIDDEN');
    });

    const attacks: [string, () => string][] = [
      ['alg none', () => forgeJwt({ alg: 'none', typ: 'JWT', kid: a.apiKey }, claims(), null)],
      ['alg "None"', () => forgeJwt({ alg: 'None', typ: 'JWT', kid: a.apiKey }, claims(), null)],
      ['alg none with a signature', () => forgeJwt({ alg: 'none', kid: a.apiKey }, claims(), a.apiSecret)],
      [
        'HS512 with the right secret',
        () => forgeJwt({ alg: 'HS512', typ: 'JWT', kid: a.apiKey }, claims(), a.apiSecret),
      ],
      ['RS256 header', () => forgeJwt({ alg: 'RS256', typ: 'JWT', kid: a.apiKey }, claims(), a.apiSecret)],
      ['no alg', () => forgeJwt({ typ: 'JWT', kid: a.apiKey }, claims(), a.apiSecret)],
      [
        'a wrong key',
        () => forgeJwt({ alg: 'HS256', kid: a.apiKey }, claims(), 'sk_not-the-secret-of-this-workspace'),
      ],
      ['expired', () => hs256({ iat: nowSeconds() - 7200, exp: nowSeconds() - 10 })],
      ['no exp', () => hs256({ exp: undefined })],
      ['no iat', () => hs256({ iat: undefined })],
      ['no sub', () => hs256({ sub: undefined })],
      ['an empty sub', () => hs256({ sub: '' })],
      ['a numeric sub', () => hs256({ sub: 42 })],
      ['exp as a string', () => hs256({ exp: String(nowSeconds() + 60) })],
      ['a lifetime of 86401 s', () => hs256({ iat: nowSeconds() - 1, exp: nowSeconds() + 86_400 })],
      [
        'a lifetime of 86401 s issued in the past',
        () => hs256({ iat: nowSeconds() - 86_000, exp: nowSeconds() + 401 }),
      ],
      ['iat far in the future', () => hs256({ iat: nowSeconds() + 3600, exp: nowSeconds() + 7200 })],
      ['an unknown kid', () => hs256({}, { kid: 'pk_doesnotexist000' })],
      ['a kid that is not an api key', () => hs256({}, { kid: 'some-other-kid' })],
      ['no kid', () => hs256({}, { kid: undefined })],
      ['an unknown user', () => hs256({ sub: 'nobody' })],
      ['a sub with a NUL', () => hs256({ sub: 'ana\u0000' })],
      [
        'B secret with A kid',
        () => forgeJwt({ alg: 'HS256', kid: a.apiKey }, claims({ sub: 'bo' }), b.apiSecret),
      ],
      ['A kid and secret for a user that exists only in B', () => hs256({ sub: 'bo' })],
      [
        'B kid with A secret',
        () => forgeJwt({ alg: 'HS256', kid: b.apiKey }, claims({ sub: 'bo' }), a.apiSecret),
      ],
      [
        'a tampered payload',
        () => {
          const [h, , s] = hs256().split('.');
          const payload = Buffer.from(
            JSON.stringify(claims({ sub: 'ana', exp: nowSeconds() + 80_000 })),
          ).toString('base64url');
          return `${h}.${payload}.${s}`;
        },
      ],
      [
        'a payload swapped to another user',
        () => {
          const [h, , s] = hs256({ sub: 'ana' }).split('.');
          return `${h}.${Buffer.from(JSON.stringify(claims({ sub: 'bo' }))).toString('base64url')}.${s}`;
        },
      ],
      ['a stripped signature', () => hs256().split('.').slice(0, 2).join('.') + '.'],
      ['garbage', () => 'not-a-jwt'],
      ['three garbage segments', () => 'abc.def.ghi'],
      [
        'a JSON string payload',
        () =>
          `${Buffer.from('{"alg":"HS256","kid":"x"}').toString('base64url')}.${Buffer.from('"x"').toString('base64url')}.sig`,
      ],
    ];

    it.each(attacks)('refuses %s with 401 UNAUTHORIZED', async (_name, make) => {
      expectError(await probe(make()), 401, 'UNAUTHORIZED');
    });

    // the messages are part of what integrators see; they stay as they were with jsonwebtoken
    const messages: [string, () => string, string][] = [
      [
        'alg none',
        () => forgeJwt({ alg: 'none', typ: 'JWT', kid: a.apiKey }, claims(), null),
        'Only HS256 tokens are accepted',
      ],
      [
        'RS256',
        () => forgeJwt({ alg: 'RS256', typ: 'JWT', kid: a.apiKey }, claims(), a.apiSecret),
        'Only HS256 tokens are accepted',
      ],
      [
        'HS512',
        () => forgeJwt({ alg: 'HS512', typ: 'JWT', kid: a.apiKey }, claims(), a.apiSecret),
        'Only HS256 tokens are accepted',
      ],
      ['garbage', () => 'not-a-jwt', 'Malformed token'],
      ['three garbage segments', () => 'abc.def.ghi', 'Malformed token'],
      [
        'a JSON string payload',
        () =>
          `${Buffer.from('{"alg":"HS256","kid":"x"}').toString('base64url')}.${Buffer.from('"x"').toString('base64url')}.sig`,
        'Malformed token',
      ],
      // jsonwebtoken threw a SyntaxError here (500): now a 401 like any malformed token
      [
        'typ JWT with a payload that is not JSON',
        () =>
          `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: a.apiKey })).toString('base64url')}.${Buffer.from('nope').toString('base64url')}.sig`,
        'Malformed token',
      ],
      ['no kid', () => hs256({}, { kid: undefined }), 'The token has no kid'],
      ['no sub', () => hs256({ sub: undefined }), 'The token has no sub'],
      ['an unknown kid', () => hs256({}, { kid: 'pk_doesnotexist000' }), 'Unknown kid'],
      [
        'a wrong key',
        () => forgeJwt({ alg: 'HS256', kid: a.apiKey }, claims(), 'sk_not-the-secret-of-this-workspace'),
        'Invalid token',
      ],
      ['a stripped signature', () => hs256().split('.').slice(0, 2).join('.') + '.', 'Invalid token'],
      ['a truncated signature', () => hs256().slice(0, -1), 'Invalid token'],
      ['nbf in the future', () => hs256({ nbf: nowSeconds() + 600 }), 'Invalid token'],
      ['exp as a string', () => hs256({ exp: String(nowSeconds() + 60) }), 'Invalid token'],
      ['expired', () => hs256({ iat: nowSeconds() - 7200, exp: nowSeconds() - 10 }), 'The token has expired'],
      ['no exp', () => hs256({ exp: undefined }), 'The token needs iat and exp'],
      [
        'a lifetime of 86401 s',
        () => hs256({ iat: nowSeconds() - 1, exp: nowSeconds() + 86_400 }),
        'The token lives longer than 24 hours',
      ],
      [
        'iat far in the future',
        () => hs256({ iat: nowSeconds() + 3600, exp: nowSeconds() + 7200 }),
        'The token was issued in the future',
      ],
      ['an unknown user', () => hs256({ sub: 'nobody' }), 'Unknown user'],
    ];

    it.each(messages)('refuses %s with the message it always had', async (_name, make, message) => {
      const res = await probe(make());
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.body.error.message).toBe(message);
    });

    it('many first requests at once (their lookups go together) each act as their own user of their own workspace', async () => {
      const ids = Array.from({ length: 8 }, (_, i) => `crowd-${i}`);
      const users = [...(await a.users(...ids)), ...(await b.users(...ids))];
      const own = new Map<string, string>();
      for (const [ws, prefix] of [
        [a, 'a'],
        [b, 'b'],
      ] as const)
        for (const id of ids) {
          const res = await ws.api.post('/v1/channels', {
            type: 'group',
            external_id: `${prefix}-${id}`,
            member_external_ids: [id],
          });
          expect(res.status).toBe(201);
        }
      users.forEach((u, i) => own.set(u.token, `${i < ids.length ? 'a' : 'b'}-${u.external_id}`));
      const stranger = userToken(a.apiKey, a.apiSecret, 'crowd-nobody');
      const [refused, ...pages] = await Promise.all([
        probe(stranger),
        ...users.map((u) => u.api.get('/v1/me/channels')),
      ]);
      expectError(refused, 401, 'UNAUTHORIZED');
      expect(refused.body.error.message).toBe('Unknown user');
      pages.forEach((res, i) => {
        expect(res.status).toBe(200);
        expect((res.body.channels as { external_id: string }[]).map((c) => c.external_id)).toEqual([
          own.get(users[i]!.token),
        ]);
      });
    });

    it('refuses a token of a user that has since been deleted', async () => {
      const zoe = await a.user('zoe');
      expect((await a.api.delete('/v1/users/zoe')).status).toBe(204);
      expectError(await zoe.api.get('/v1/workspace'), 401, 'UNAUTHORIZED');
    });
  });

  describe('workspace key pair', () => {
    it('works as Bearer pk_…:sk_…', async () => {
      const res = await withAuth(`Bearer ${a.apiKey}:${a.apiSecret}`).get('/v1/workspace');
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(a.id);
    });

    it('works as HTTP Basic', async () => {
      const basic = Buffer.from(`${a.apiKey}:${a.apiSecret}`).toString('base64');
      const res = await withAuth(`Basic ${basic}`).get('/v1/workspace');
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(a.id);
      const viaAgent = await t.http().get('/v1/workspace').auth(b.apiKey, b.apiSecret);
      expect(viaAgent.status).toBe(200);
      expect(viaAgent.body.id).toBe(b.id);
    });

    const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
    const bad: [string, () => string | null][] = [
      ['no Authorization header', () => null],
      ['a wrong secret (Bearer)', () => `Bearer ${a.apiKey}:sk_wrongwrongwrongwrongwrong`],
      ['a wrong secret (Basic)', () => basic(`${a.apiKey}:sk_wrongwrongwrongwrongwrong`)],
      ["B's secret with A's key", () => `Bearer ${a.apiKey}:${b.apiSecret}`],
      ['an unknown key', () => `Bearer pk_unknownunknown:${a.apiSecret}`],
      ['an unknown key (Basic)', () => basic(`pk_unknownunknown:${a.apiSecret}`)],
      ['a key without its secret', () => `Bearer ${a.apiKey}`],
      ['a key with an empty secret', () => `Bearer ${a.apiKey}:`],
      ['the secret alone', () => `Bearer ${a.apiSecret}`],
      ['Basic without a colon', () => basic(a.apiKey)],
      ['Basic that is not base64', () => 'Basic %%%%'],
      ['Basic with a non-pk user', () => basic(`admin:${a.apiSecret}`)],
      ['an empty Bearer', () => 'Bearer '],
      ['a bare scheme', () => 'Bearer'],
      ['an unknown scheme', () => `Token ${a.apiKey}:${a.apiSecret}`],
      ['a value without a scheme', () => `${a.apiKey}:${a.apiSecret}`],
    ];

    it.each(bad)('refuses %s with 401 UNAUTHORIZED', async (_name, make) => {
      expectError(await withAuth(make()).get('/v1/workspace'), 401, 'UNAUTHORIZED');
    });

    it('says the same for a wrong secret and an unknown key, also once the key is cached', async () => {
      expect((await withAuth(`Bearer ${a.apiKey}:${a.apiSecret}`).get('/v1/workspace')).status).toBe(200);
      for (const auth of [
        `Bearer ${a.apiKey}:sk_wrongwrongwrongwrongwrong`,
        `Bearer pk_unknownunknown:${a.apiSecret}`,
        basic(`${a.apiKey}:${b.apiSecret}`),
      ]) {
        const res = await withAuth(auth).get('/v1/workspace');
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.body.error.message).toBe('Missing or invalid credentials');
      }
    });
  });

  describe('a user JWT on backend-only routes', () => {
    it('answers 403 FORBIDDEN and changes nothing', async () => {
      const ana = withAuth(`Bearer ${userToken(a.apiKey, a.apiSecret, 'ana')}`);
      const calls = [
        ana.get('/v1/workspace'),
        ana.patch('/v1/workspace/settings', { read_receipts_enabled: false }),
        ana.post('/v1/workspace/rotate-secret', {}),
        ana.put('/v1/users/mallory', { name: 'Mallory' }),
        ana.post('/v1/users', { users: [{ external_id: 'mallory' }] }),
        ana.get('/v1/users/ana'),
        ana.delete('/v1/users/ana'),
        ana.post('/v1/users/ana/token', {}),
        ana.get('/v1/admin/workspaces'),
      ];
      for (const res of await Promise.all(calls)) expectError(res, 403, 'FORBIDDEN');

      expectError(await a.api.get('/v1/users/mallory'), 404, 'NOT_FOUND');
      expect((await a.api.get('/v1/users/ana')).status).toBe(200);
      const ws = await a.api.get('/v1/workspace');
      expect(ws.body.settings.read_receipts_enabled).toBe(true);
      expect(ws.body.api_key).toBe(a.apiKey);
    });
  });
});
