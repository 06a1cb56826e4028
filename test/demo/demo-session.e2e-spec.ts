/**
 * The demo app at /demo: its static files and cache headers, and the development sign-in
 * (SERVICE_DEMO): on by default on the embedded database, it mints user tokens for the development
 * workspace with the service's own signer; with it off the route is 404 and the page is still served.
 */
import { decode } from 'jsonwebtoken';
import { startTestApp, TestApp } from '../support/app';
import { isIntegration } from '../support/databases';
import { expectError } from '../support/errors';
import { admin, Client } from '../support/fixtures';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildDemo } = require('../../scripts/build-demo.js') as {
  buildDemo: () => Promise<{ js: string; css: string }>;
};

describe('demo app: static files and the development sign-in', () => {
  let t: TestApp;
  let built: { js: string; css: string };

  beforeAll(async () => {
    built = await buildDemo();
    // on by default on the embedded database; with DATABASE_URL (the integration run) only when asked
    t = await startTestApp(isIntegration() ? { SERVICE_DEMO: 'true' } : {});
  }, 300_000);
  afterAll(() => t?.close());

  it('serves the page (revalidated) and its hashed bundles (cached for good), under a strict CSP', async () => {
    await t.http().get('/demo').expect(301).expect('Location', '/demo/');
    const page = await t
      .http()
      .get('/demo/')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.text).toContain(`./${built.js}`);
    expect(page.text).toContain(`./${built.css}`);
    expect(page.text).not.toMatch(/https?:\/\//); // nothing from a CDN
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");

    const js = await t
      .http()
      .get(`/demo/${built.js}`)
      .expect(200)
      .expect('Content-Type', /javascript/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    await t
      .http()
      .get(`/demo/${built.css}`)
      .expect(200)
      .expect('Content-Type', /text\/css/);
    await t.http().get('/demo/no-such-file.js').expect(404);

    const config = await t.http().get('/demo/config.json').expect(200);
    expect(config.body).toEqual({ dev_sign_in: true });
  });

  it('leaves the OpenAPI document alone', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/demo'))).toEqual([]);
  });

  it('signs a user in: upserted in the development workspace, a member of #general, with a working token', async () => {
    const res = await t.http().post('/demo/api/session').send({ user_id: 'ana', name: 'Ana' }).expect(200);
    const body = res.body as {
      token: string;
      expires_at: string;
      user: { external_id: string; name: string };
      channel_id: string;
    };
    expect(body.user).toMatchObject({ external_id: 'ana', name: 'Ana' });
    expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(body)).not.toMatch(/sk_/); // never the workspace secret

    const jwt = decode(body.token, { complete: true });
    expect(jwt?.header).toMatchObject({ alg: 'HS256', kid: expect.stringMatching(/^pk_/) });
    expect(jwt?.payload).toMatchObject({ sub: 'ana' });

    const ana = new Client(t, `Bearer ${body.token}`);
    const mine = await ana.get('/v1/me/channels').expect(200);
    const general = (
      mine.body as { channels: { id: string; external_id: string; name: string; role: string }[] }
    ).channels;
    expect(general).toEqual([
      expect.objectContaining({
        id: body.channel_id,
        external_id: 'general',
        name: 'General',
        role: 'admin',
      }),
    ]);

    // a second user joins the same channel; signing in again is harmless
    const bo = (await t.http().post('/demo/api/session').send({ user_id: 'bo' }).expect(200)).body as {
      token: string;
      channel_id: string;
    };
    expect(bo.channel_id).toBe(body.channel_id);
    await t.http().post('/demo/api/session').send({ user_id: 'ana' }).expect(200);
    const channel = await new Client(t, `Bearer ${bo.token}`)
      .get(`/v1/channels/${body.channel_id}/presence`)
      .expect(200);
    expect(
      (channel.body as { members: { external_id: string }[] }).members.map((m) => m.external_id).sort(),
    ).toEqual(['ana', 'bo']);

    // the one development workspace, named so: what the embedded default creates on a first start
    const workspaces = await admin(t).get('/v1/admin/workspaces').expect(200);
    expect((workspaces.body as { workspaces: { name: string }[] }).workspaces.map((w) => w.name)).toEqual([
      'Development',
    ]);
  });

  it.each([
    ['no user id', {}],
    ['an empty one', { user_id: '' }],
    ['upper case', { user_id: 'Ana' }],
    ['a slash', { user_id: 'a/b' }],
    ['too long', { user_id: 'a'.repeat(33) }],
    ['not a string', { user_id: 42 }],
    ['a long name', { user_id: 'cy', name: 'x'.repeat(65) }],
    ['an unknown field', { user_id: 'cy', admin: true }],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_what, body) => {
    expectError(await t.http().post('/demo/api/session').send(body), 400, 'VALIDATION_ERROR');
  });
});

describe('demo app with SERVICE_DEMO=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_DEMO: 'false' });
  }, 300_000);
  afterAll(() => t?.close());

  it('has no sign-in route (404) and tells the page so; the page itself is still served', async () => {
    expectError(await t.http().post('/demo/api/session').send({ user_id: 'ana' }), 404, 'NOT_FOUND');
    expect((await t.http().get('/demo/config.json').expect(200)).body).toEqual({ dev_sign_in: false });
    await t
      .http()
      .get('/demo/')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    const workspaces = await admin(t).get('/v1/admin/workspaces').expect(200);
    expect((workspaces.body as { workspaces: unknown[] }).workspaces).toEqual([]);
  });
});
