/**
 * Per-workspace quotas (issue 29) through the operator's API: what is in force, an override that takes
 * effect at once, cleared back to the default, and each quota refusing with 429 RATE_LIMITED and
 * Retry-After while another workspace goes on unhindered.
 */
import { startTestApp, TestApp } from '../support/app';
import { admin, Client, newWorkspace, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectError, connectSocket } from '../support/socket';
import { holdOne } from './held-request';

const DEFAULTS = {
  SERVICE_WORKSPACE_REQUESTS_PER_SECOND: '500',
  SERVICE_WORKSPACE_CONCURRENT_REQUESTS: '16',
  SERVICE_WORKSPACE_SOCKETS: '10000',
};

describe('workspace quotas', () => {
  let t: TestApp;
  let a: TestWorkspace;
  let b: TestWorkspace;
  const quotasOf = (ws: TestWorkspace) => `/v1/admin/workspaces/${ws.id}/quotas`;

  beforeAll(async () => {
    t = await startTestApp(DEFAULTS);
    a = await newWorkspace(t);
    b = await newWorkspace(t);
  });
  afterAll(async () => {
    closeAllSockets();
    await t?.close();
  });

  it('shows the defaults in force, then a workspace’s own quotas, and clears them with null', async () => {
    const before = await admin(t).get(quotasOf(a));
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      quotas: { requests_per_second: 500, concurrent_requests: 16, sockets: 10000 },
      overrides: {},
    });

    const set = await admin(t).patch(quotasOf(a), { requests_per_second: 40, sockets: 7 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      quotas: { requests_per_second: 40, concurrent_requests: 16, sockets: 7 },
      overrides: { requests_per_second: 40, sockets: 7 },
    });
    // a later patch changes only what it names
    const more = await admin(t).patch(quotasOf(a), { concurrent_requests: 3 });
    expect(more.body.overrides).toEqual({ requests_per_second: 40, sockets: 7, concurrent_requests: 3 });

    const cleared = await admin(t).patch(quotasOf(a), {
      requests_per_second: null,
      sockets: null,
      concurrent_requests: null,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual(before.body);
    expect((await admin(t).get(quotasOf(b))).body.overrides).toEqual({});
  });

  it('refuses bad quotas, unknown workspaces and callers that are not the operator', async () => {
    for (const body of [
      { requests_per_second: 0 },
      { concurrent_requests: 1.5 },
      { sockets: 'many' },
      { requests_per_second: 2_000_000 },
      { burst: 3 },
    ]) {
      const r = await admin(t).patch(quotasOf(a), body);
      expect({ body, status: r.status, code: r.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'VALIDATION_ERROR',
      });
    }
    const none = '00000000-0000-4000-8000-000000000000';
    expect((await admin(t).get(`/v1/admin/workspaces/${none}/quotas`)).status).toBe(404);
    expect((await admin(t).patch(`/v1/admin/workspaces/${none}/quotas`, { sockets: 3 })).status).toBe(404);
    expect((await a.api.get(quotasOf(a))).status).toBe(403);
    expect((await a.api.patch(quotasOf(a), { sockets: 100000 })).status).toBe(403);
  });

  it('refuses requests over the requests-per-second quota with 429 and Retry-After; others go on', async () => {
    await admin(t).patch(quotasOf(a), { requests_per_second: 5 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => a.api.get('/v1/workspace')));
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    expect(ok.length + limited.length).toBe(12);
    expect(ok.length).toBeLessThanOrEqual(5);
    expect(limited.length).toBeGreaterThanOrEqual(7);
    for (const r of limited) {
      expect(r.body.error.code).toBe('RATE_LIMITED');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // another workspace is not held back by a's quota
    const others = await Promise.all(Array.from({ length: 12 }, () => b.api.get('/v1/workspace')));
    expect(others.map((r) => r.status)).toEqual(Array(12).fill(200));

    const metrics = (await t.http().get('/metrics')).text;
    expect(metrics).toMatch(
      new RegExp(
        `chat_workspace_quota_refusals_total\\{workspace="${a.id}",quota="requests_per_second"\\} ${limited.length}\\b`,
      ),
    );
    await admin(t).patch(quotasOf(a), { requests_per_second: null });
  });

  it('holds a workspace to its concurrent requests: the others wait their turn, past its queue 429', async () => {
    await admin(t).patch(quotasOf(a), { concurrent_requests: 1 });
    await a.api.get('/v1/workspace'); // the instance learns the quota
    // a's one request in progress: a send its pre-send hook holds
    const slow = await holdOne(a);

    // a's quota of 1 lets 32 wait behind it (32 per request of its quota); the rest are refused at once
    const burst = Array.from({ length: 40 }, () => Promise.resolve(a.api.get('/v1/workspace')));
    const refused = await Promise.race([
      Promise.all(burst),
      new Promise<null>((r) => setTimeout(() => r(null), 1_000)),
    ]);
    expect(refused).toBeNull(); // most of them wait for a's turn
    // another workspace meanwhile is not held back, nor is a by requests with its API key and a made-up
    // secret: they are not a's (401 at once, not queued behind a's quota)
    const others = await Promise.all(Array.from({ length: 5 }, () => b.api.get('/v1/workspace')));
    expect(others.map((r) => r.status)).toEqual(Array(5).fill(200));
    const forged = new Client(t, `Bearer ${a.apiKey}:sk_made_up`);
    const forgedAnswers = await Promise.all(Array.from({ length: 5 }, () => forged.get('/v1/workspace')));
    expect(forgedAnswers.map((r) => r.status)).toEqual(Array(5).fill(401));

    expect(await slow.release()).toBe(201);
    const answers = await Promise.all(burst);
    const limited = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(32);
    expect(limited).toHaveLength(8);
    for (const r of limited) {
      expect(r.body.error.code).toBe('RATE_LIMITED');
      expect(r.headers['retry-after']).toBe('1');
    }
    expect((await a.api.get('/v1/workspace')).status).toBe(200); // its turn is free again
    const metrics = (await t.http().get('/metrics')).text;
    expect(metrics).toMatch(
      new RegExp(
        `chat_workspace_quota_refusals_total\\{workspace="${a.id}",quota="concurrent_requests"\\} 8\\b`,
      ),
    );
    await admin(t).patch(quotasOf(a), { concurrent_requests: null });
  });

  it('refuses a socket over the workspace’s socket quota, and takes one again once one closed', async () => {
    await admin(t).patch(quotasOf(a), { sockets: 1 });
    const [u1, u2] = await a.users('sock-1', 'sock-2');
    const first = await connectSocket(t.baseUrl, u1!.token);
    const refused = await connectError(t.baseUrl, u2!.token);
    expect(refused.data?.error?.code).toBe('RATE_LIMITED');
    // another workspace's sockets are not counted against a's
    const [v] = await b.users('sock-b');
    await connectSocket(t.baseUrl, v!.token);

    first.close();
    let again: Awaited<ReturnType<typeof connectSocket>> | undefined;
    for (let i = 0; i < 50 && !again; i++) {
      again = await connectSocket(t.baseUrl, u2!.token).catch(async () => {
        await new Promise((r) => setTimeout(r, 50));
        return undefined;
      });
    }
    expect(again?.socket.connected).toBe(true);
    await admin(t).patch(quotasOf(a), { sockets: null });
  });
});
