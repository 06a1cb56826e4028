import http from 'http';
import type { AddressInfo } from 'net';
import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket, TestSocket } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

interface Preview {
  url: string;
  title: string;
  description: string | null;
  image_url: string | null;
  site_name: string | null;
}

const ENRICHED_MS = 10_000;

/** CONTRACT §26's previews of the links in messages, against pages served here: on the embedded database and on PostgreSQL. */
describe('link previews of messages', () => {
  let t: TestApp;
  let site: http.Server;
  let base = '';
  const hits = new Map<string, number>();
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  let ch: { id: string; external_id: string };
  let sb: TestSocket;

  beforeAll(async () => {
    // every page is titled by its path; /slow answers after 300 ms
    site = http.createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<html><head><title>Page ${path}</title><meta name="description" content="About ${path}"></head></html>`,
        );
      };
      if (path.startsWith('/slow')) setTimeout(answer, 300);
      else answer();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    rx = await Receiver.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
    await rx.close();
    site.closeAllConnections();
    await new Promise((r) => site.close(r));
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo']);
    sb = await connectSocket(t.baseUrl, bo.token);
  });
  afterEach(() => closeAllSockets());

  /** A page of its own for each test: `/name-<n>`. */
  let n = 0;
  const page = (name: string) => `${base}/${name}-${++n}`;
  const send = async (body: Record<string, unknown>) => {
    const res = await ana.api.post(`/v1/channels/${ch.id}/messages`, body);
    expect(res.status).toBe(201);
    return res.body as { id: string; previews: Preview[] };
  };
  const enriched = (id: string, count: number) =>
    sb.waitFor(
      'message.updated',
      (e) => e.data.id === id && e.data.content === undefined && e.data.previews.length === count,
      ENRICHED_MS,
    );
  const inHistory = async (id: string) =>
    (
      (await bo.api.get(`/v1/channels/${ch.id}/messages`)).body.messages as {
        id: string;
        previews: Preview[];
      }[]
    ).find((m) => m.id === id)!.previews;
  const brief = (ps: Preview[]) => ps.map((p) => [p.url, p.title]);

  it('fetches the links of a send after it answered: message.updated with the previews in order, then history and webhooks show them', async () => {
    const hook = rx.url(200, 'previews');
    await createWebhook(ws, hook, ['message.created', 'message.updated']);
    const [a, b] = [page('a'), page('b')];
    const m = await send({ content: `see ${a}, and (${b}). Also ${a} again` });
    expect(m.previews).toEqual([]);

    const env = await enriched(m.id, 2);
    expect(env.data).toEqual({
      id: m.id,
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      previews: [
        {
          url: a,
          title: `Page ${new URL(a).pathname}`,
          description: `About ${new URL(a).pathname}`,
          image_url: null,
          site_name: null,
        },
        {
          url: b,
          title: `Page ${new URL(b).pathname}`,
          description: `About ${new URL(b).pathname}`,
          image_url: null,
          site_name: null,
        },
      ],
      edited_at: null,
    });
    expect(typeof env.seq).toBe('number');
    expect(hits.get(new URL(a).pathname)).toBe(1); // written twice, fetched once
    expect(brief(await inHistory(m.id))).toEqual(brief(env.data.previews));

    const [created, updated] = await Promise.all([
      rx.waitFor(hook, { timeoutMs: ENRICHED_MS, pred: (r) => eventOf(r) === 'message.created' }),
      rx.waitFor(hook, { timeoutMs: ENRICHED_MS, pred: (r) => eventOf(r) === 'message.updated' }),
    ]);
    expect(created[0]!.json.data.message.previews).toEqual([]);
    expect(brief(updated[0]!.json.data.message.previews)).toEqual(brief(env.data.previews));
  });

  it('fetches nothing for a send with skip_previews nor for a system message', async () => {
    const [skipped, system, control] = [page('skipped'), page('system'), page('slow')];
    const quiet = await send({ content: `skip ${skipped}`, skip_previews: true });
    const sys = await ws.api.post('/v1/messages', {
      channel_id: ch.id,
      system: true,
      content: `notice ${system}`,
    });
    expect(sys.status).toBe(201);
    // a later send whose page answers slowly: by its preview, the jobs of the two before it are done
    const later = await send({ content: `control ${control}` });
    await sb.expectNoneBefore(
      'message.updated',
      (e) => e.data.id === quiet.id || e.data.id === sys.body.id,
      ['message.updated', (e) => e.data.id === later.id && e.data.previews?.length === 1],
      ENRICHED_MS,
    );
    expect([hits.get(new URL(skipped).pathname), hits.get(new URL(system).pathname)]).toEqual([
      undefined,
      undefined,
    ]);
    expect(await inHistory(quiet.id)).toEqual([]);
    // an edit of the opted-out message does not fetch either
    expect(
      (await ana.api.patch(`/v1/messages/${quiet.id}`, { content: `still ${skipped} ${page('edited')}` }))
        .status,
    ).toBe(200);
    const control2 = await send({ content: `control ${page('slow')}` });
    await sb.expectNoneBefore(
      'message.updated',
      (e) => e.data.id === quiet.id && e.data.content === undefined,
      ['message.updated', (e) => e.data.id === control2.id && e.data.previews?.length === 1],
      ENRICHED_MS,
    );
    expect(hits.get(new URL(skipped).pathname)).toBeUndefined();
  });

  it('an edit drops the previews of the links it removes at once and gets those it adds; an unsend blanks them', async () => {
    const [a, b, c] = [page('a'), page('b'), page('c')];
    const m = await send({ content: `${a} ${b}` });
    await enriched(m.id, 2);

    const kept = await ana.api.patch(`/v1/messages/${m.id}`, { content: `only ${b}` });
    expect(brief(kept.body.previews)).toEqual([[b, `Page ${new URL(b).pathname}`]]);
    const edit = await sb.waitFor(
      'message.updated',
      (e) => e.data.id === m.id && e.data.content === `only ${b}`,
    );
    expect(brief(edit.data.previews)).toEqual([[b, `Page ${new URL(b).pathname}`]]);
    expect(brief(await inHistory(m.id))).toEqual([[b, `Page ${new URL(b).pathname}`]]);

    const added = await ana.api.patch(`/v1/messages/${m.id}`, { content: `${c} then ${b}` });
    expect(brief(added.body.previews)).toEqual([[b, `Page ${new URL(b).pathname}`]]);
    const env = await sb.waitFor(
      'message.updated',
      (e) =>
        e.data.id === m.id &&
        e.data.content === undefined &&
        e.data.previews.some((p: Preview) => p.url === c),
      ENRICHED_MS,
    );
    // the order of the links in the content, and edited_at as the edit left it
    expect([brief(env.data.previews), env.data.edited_at]).toEqual([
      [
        [c, `Page ${new URL(c).pathname}`],
        [b, `Page ${new URL(b).pathname}`],
      ],
      added.body.edited_at,
    ]);
    expect(hits.get(new URL(b).pathname)).toBe(1);

    const unsent = await ana.api.delete(`/v1/messages/${m.id}`);
    expect([unsent.status, unsent.body.previews]).toEqual([200, []]);
    expect(await inHistory(m.id)).toEqual([]);
  });

  it('fetches nothing while link_previews_enabled is off', async () => {
    expect((await ws.api.patch('/v1/workspace/settings', { link_previews_enabled: false })).status).toBe(200);
    const off = page('off');
    const m = await send({ content: `off ${off}` });
    // another workspace's send, enriched: the relay passed both
    const other = await newWorkspace(t);
    const [cy] = (await other.users('cy', 'di')) as [TestUser];
    const och = await group(other, 'cy', ['di']);
    const sc = await connectSocket(t.baseUrl, cy.token);
    const on = await cy.api.post(`/v1/channels/${och.id}/messages`, { content: `on ${page('slow')}` });
    await sc.waitFor(
      'message.updated',
      (e) => e.data.id === on.body.id && e.data.previews?.length === 1,
      ENRICHED_MS,
    );
    expect(hits.get(new URL(off).pathname)).toBeUndefined();
    expect(await inHistory(m.id)).toEqual([]);
  });
});
