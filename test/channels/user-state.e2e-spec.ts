import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket, Received, sleep, TestSocket } from '../support/socket';
import { FakeFcm, FcmRequest } from '../push/fcm';
import { group, Msg, send } from '../messages/helpers';

interface MyChannel {
  id: string;
  external_id: string;
  unread_count: number;
  mention_unread_count: number;
  last_message: Msg | null;
  muted_until: string | null;
  hidden: boolean;
  archived: boolean;
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * CONTRACT §18: a user's own state of a channel. Hidden channels come back with the next message from
 * someone else (a read-time rule on the send path's counters), archived ones stay out until unarchived,
 * a mute stops push but not mentions, and every change reaches the caller's own sockets only.
 */
describe('per-user channel state (PATCH /v1/me/channels/:id/state)', () => {
  const fcm = new FakeFcm();
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    fcm.start();
    t = await startTestApp({
      SERVICE_PUSH_SERVICE_ACCOUNT_FILE: fcm.serviceAccountFile,
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
    });
  });
  afterAll(async () => {
    closeAllSockets();
    await t?.close();
    fcm.stop();
  });
  beforeEach(async () => {
    fcm.reset();
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo', 'cy']);
  });
  afterEach(() => closeAllSockets());

  const setState = async (
    u: TestUser,
    body: Record<string, unknown>,
    channel = ch.id,
  ): Promise<MyChannel> => {
    const res = await u.api.patch(`/v1/me/channels/${encodeURIComponent(channel)}/state`, body);
    if (res.status !== 200)
      throw new Error(`PATCH state ${JSON.stringify(body)} answered ${res.status} ${res.text}`);
    return res.body as MyChannel;
  };
  const list = async (u: TestUser, include?: string): Promise<MyChannel[]> => {
    const res = await u.api.get(
      `/v1/me/channels?limit=100${include !== undefined ? `&include=${include}` : ''}`,
    );
    expect(res.status).toBe(200);
    return res.body.channels as MyChannel[];
  };
  const listed = async (u: TestUser, include?: string, channelId = ch.id) =>
    (await list(u, include)).some((c) => c.id === channelId);
  const stateOf = async (u: TestUser, channelId = ch.id) => {
    const c = (await list(u, 'hidden,archived')).find((x) => x.id === channelId);
    if (!c)
      throw new Error(`channel ${channelId} not in ${u.external_id}'s list with include=hidden,archived`);
    return { muted_until: c.muted_until, hidden: c.hidden, archived: c.archived };
  };
  const plain = { muted_until: null, hidden: false, archived: false };

  it('answers the caller’s view of the channel, as the inbox lists it, with the state fields', async () => {
    const m = await send(ana, ch.id, 'hello');
    const view = await setState(bo, { archived: true });
    const inInbox = (await list(bo, 'archived')).find((c) => c.id === ch.id);
    expect(view).toEqual(inInbox);
    expect(view).toMatchObject({
      id: ch.id,
      external_id: ch.external_id,
      role: 'member',
      unread_count: 1,
      mention_unread_count: 0,
      ...plain,
      archived: true,
    });
    expect(view.last_message?.id).toBe(m.id);
    // every channel of the inbox carries the three fields, whatever the include
    for (const c of await list(ana)) expect(c).toMatchObject(plain);
    // by external id too; an empty body changes nothing and answers the same view
    expect(await setState(bo, {}, ch.external_id)).toEqual(view);
  });

  it('hidden: out of the inbox until someone else sends; the caller’s own messages keep it hidden', async () => {
    expect((await setState(bo, { hidden: true })).hidden).toBe(true);
    expect(await listed(bo)).toBe(false);
    expect(await listed(bo, 'hidden')).toBe(true);
    expect(await listed(bo, 'archived')).toBe(false);
    expect(await listed(ana)).toBe(true); // only the caller is affected
    expect(await stateOf(ana)).toEqual(plain);

    await send(bo, ch.id, 'my own message');
    await send(bo, ch.id, 'and another');
    expect(await listed(bo)).toBe(false);
    expect((await stateOf(bo)).hidden).toBe(true);

    await send(cy, ch.id, 'someone else');
    expect(await listed(bo)).toBe(true);
    expect(await stateOf(bo)).toEqual(plain);
    // hiding again needs another message from someone else to come back; a system message is one
    await setState(bo, { hidden: true });
    expect(await listed(bo)).toBe(false);
    expect(
      (await ws.api.post('/v1/messages', { channel_id: ch.id, system: true, content: 'notice' })).status,
    ).toBe(201);
    expect(await listed(bo)).toBe(true);
    // and hidden: false shows it at once
    await setState(bo, { hidden: true });
    expect((await setState(bo, { hidden: false })).hidden).toBe(false);
    expect(await listed(bo)).toBe(true);
  });

  it('a message from a user the caller blocks does not unhide the channel', async () => {
    expect((await bo.api.post('/v1/me/blocks', { external_id: 'cy' })).status).toBe(201);
    await send(cy, ch.id, 'before the hide');
    await setState(bo, { hidden: true });
    await send(cy, ch.id, 'blocked 1');
    await send(bo, ch.id, 'own');
    await send(cy, ch.id, 'blocked 2');
    expect(await listed(bo)).toBe(false);
    expect((await stateOf(bo)).hidden).toBe(true);
    await send(ana, ch.id, 'not blocked');
    expect(await listed(bo)).toBe(true);
    // for cy (who blocks nobody) nothing changed
    expect(await stateOf(cy)).toEqual(plain);
  });

  it('thread-only replies (not in the channel) leave a hidden channel hidden, also from a blocked user', async () => {
    const root = await send(ana, ch.id, 'root');
    expect((await bo.api.post('/v1/me/blocks', { external_id: 'cy' })).status).toBe(201);
    await send(cy, ch.id, 'before the hide');
    await setState(bo, { hidden: true });
    await send(ana, ch.id, { content: 'in the thread only', thread_id: root.id });
    await send(cy, ch.id, 'blocked, in the channel');
    await send(cy, ch.id, { content: 'blocked, in the thread only', thread_id: root.id });
    expect((await stateOf(bo)).hidden).toBe(true);
    await send(ana, ch.id, { content: 'also in the channel', thread_id: root.id, show_in_channel: true });
    expect((await stateOf(bo)).hidden).toBe(false);
  });

  it('archived: stays out after new messages until set false; include names what comes back', async () => {
    await setState(bo, { archived: true });
    await send(ana, ch.id, 'news 1');
    await send(cy, ch.id, 'news 2');
    expect(await listed(bo)).toBe(false);
    expect(await listed(bo, 'hidden')).toBe(false);
    expect(await listed(bo, 'archived')).toBe(true);
    expect(await stateOf(bo)).toEqual({ ...plain, archived: true });
    // archived and hidden at once: listed only when both are included
    await setState(bo, { hidden: true });
    expect(await listed(bo, 'archived')).toBe(false);
    expect(await listed(bo, 'hidden')).toBe(false);
    expect(await listed(bo, 'archived,hidden')).toBe(true);
    expect(await stateOf(bo)).toEqual({ ...plain, hidden: true, archived: true });
    const back = await setState(bo, { archived: false, hidden: false });
    expect(back).toMatchObject({ ...plain, unread_count: 2 });
    expect(await listed(bo)).toBe(true);
  });

  it('lists hidden and archived channels in the inbox order, paging with the same cursor', async () => {
    const channels = [ch];
    for (let i = 0; i < 4; i++) channels.push(await group(ws, 'ana', ['bo']));
    for (const c of channels) await send(ana, c.id, `in ${c.external_id}`);
    await setState(bo, { hidden: true }, channels[1]!.id);
    await setState(bo, { archived: true }, channels[3]!.id);
    const newestFirst = [...channels].reverse().map((c) => c.id);
    expect((await list(bo)).map((c) => c.id)).toEqual(
      newestFirst.filter((id) => id !== channels[1]!.id && id !== channels[3]!.id),
    );
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const res = await bo.api.get(
        `/v1/me/channels?limit=2&include=hidden,archived${before ? `&before=${before}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...(res.body.channels as MyChannel[]).map((c) => c.id));
      before = res.body.next_cursor as string | null;
    } while (before);
    expect(seen).toEqual(newestFirst);
    for (const q of ['include=muted', 'include=hidden,', 'include=HIDDEN', 'include[]=hidden'])
      expectError(await bo.api.get(`/v1/me/channels?${q}`), 400, 'VALIDATION_ERROR');
  });

  it('muted_until round-trips "forever", a time (UTC, milliseconds) and null; a past time is no mute', async () => {
    expect((await setState(bo, { muted_until: 'forever' })).muted_until).toBe('forever');
    expect(await stateOf(bo)).toEqual({ ...plain, muted_until: 'forever' });
    const at = new Date(Date.now() + 3_600_000);
    at.setUTCMilliseconds(250);
    expect((await setState(bo, { muted_until: at.toISOString() })).muted_until).toBe(at.toISOString());
    // another offset and microseconds: shown in UTC, cut to the millisecond
    const offset = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace('.250Z', '.250999+02:00');
    expect((await setState(bo, { muted_until: offset })).muted_until).toBe(at.toISOString());
    expect(await stateOf(bo)).toEqual({ ...plain, muted_until: at.toISOString() });
    // other fields leave the mute alone
    expect((await setState(bo, { archived: false })).muted_until).toBe(at.toISOString());
    expect((await setState(bo, { muted_until: null })).muted_until).toBeNull();
    expect((await setState(bo, { muted_until: '2020-01-01T00:00:00Z' })).muted_until).toBeNull();
    // a muted channel stays listed and counts as unread
    await setState(bo, { muted_until: 'forever' });
    await send(ana, ch.id, 'while muted');
    const c = (await list(bo)).find((x) => x.id === ch.id);
    expect(c).toMatchObject({ unread_count: 1, muted_until: 'forever' });
  });

  it('refuses bad values (400), non-members (403), backend keys (403) and unknown channels (404)', async () => {
    const path = `/v1/me/channels/${ch.id}/state`;
    for (const body of [
      { muted_until: 'tomorrow' },
      { muted_until: '2026-02-31T00:00:00Z' },
      { muted_until: '2026-11-21' },
      { muted_until: 'Forever' },
      { muted_until: 1767225600 },
      { muted_until: true },
      { hidden: 'yes' },
      { hidden: null },
      { archived: 1 },
      { archived: null },
      { muted: 'forever' },
    ])
      expectError(await bo.api.patch(path, body), 400, 'VALIDATION_ERROR');
    expect(await stateOf(bo)).toEqual(plain);
    const dan = await ws.user('dan');
    expectError(await dan.api.patch(path, { hidden: true }), 403, 'NOT_A_MEMBER');
    expectError(await ws.api.patch(path, { hidden: true }), 403, 'FORBIDDEN');
    expectError(
      await bo.api.patch('/v1/me/channels/no-such-channel/state', { hidden: true }),
      404,
      'NOT_FOUND',
    );
    // another workspace's channel is not found, and nothing of it changes
    const other = await newWorkspace(t);
    const [eve] = await other.users('eve');
    expectError(await eve!.api.patch(path, { archived: true }), 404, 'NOT_FOUND');
    expect(await stateOf(bo)).toEqual(plain);
    // a member who left is no longer one
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/bo`)).status).toBe(204);
    expectError(await bo.api.patch(path, { hidden: true }), 403, 'NOT_A_MEMBER');
  });

  it('channel.state_changed reaches the caller’s own sockets only, without seq, and the caller’s sync', async () => {
    const cursorOf = async (u: TestUser) => (await u.api.get('/v1/me/sync')).body.next_cursor as string;
    const [boCursor, anaCursor] = [await cursorOf(bo), await cursorOf(ana)];
    const [b1, b2, a1, c1] = await Promise.all([
      connectSocket(t.baseUrl, bo.token),
      connectSocket(t.baseUrl, bo.token),
      connectSocket(t.baseUrl, ana.token),
      connectSocket(t.baseUrl, cy.token),
    ]);
    await sleep(1500); // presence of the connects settles
    const sockets = [b1, b2, a1, c1];
    const from = sockets.map((s) => s.events.length);
    const arrived = (s: TestSocket): Received[] =>
      s.events.slice(from[sockets.indexOf(s)]).filter((e) => !e.name.startsWith('presence.'));

    const until1h = new Date(Date.now() + 3_600_000).toISOString();
    await setState(bo, { muted_until: until1h, archived: true });
    await setState(bo, {}); // an empty body announces nothing
    await setState(bo, { hidden: true });
    for (const s of [b1, b2]) await s.waitFor('channel.state_changed', (e) => e?.data?.hidden === true);
    await sleep(800);
    const expected = [
      { muted_until: until1h, hidden: false, archived: true },
      { muted_until: until1h, hidden: true, archived: true },
    ];
    for (const s of [b1, b2]) {
      const got = arrived(s);
      expect(got.map((e) => e.name)).toEqual(['channel.state_changed', 'channel.state_changed']);
      got.forEach((e, i) => {
        expect(Object.keys(e.payload).sort()).toEqual(['channel_id', 'data', 'ts', 'type', 'v']);
        expect(e.payload).toMatchObject({ v: 1, type: 'channel.state_changed', channel_id: ch.id });
        expect(e.payload.data).toEqual({ channel_id: ch.id, ...expected[i] });
        expect(typeof e.payload.ts).toBe('string');
      });
    }
    expect(arrived(a1)).toEqual([]);
    expect(arrived(c1)).toEqual([]);

    // sync carries it to bo alone; the channel's own events (by seq) do not
    const boSync = (await bo.api.get(`/v1/me/sync?since=${boCursor}`)).body as {
      events: { type: string; seq?: number; channel_id?: string; data: unknown }[];
    };
    expect(boSync.events.map((e) => e.type)).toEqual(['channel.state_changed', 'channel.state_changed']);
    expect(boSync.events[1]).toEqual({
      type: 'channel.state_changed',
      channel_id: ch.id,
      data: { channel_id: ch.id, ...expected[1] },
      created_at: expect.any(String),
    });
    expect(((await ana.api.get(`/v1/me/sync?since=${anaCursor}`)).body.events as unknown[]).length).toBe(0);
    const channelEvents = (await bo.api.get(`/v1/channels/${ch.id}/events?after_seq=0`)).body.events as {
      type: string;
    }[];
    expect(channelEvents.map((e) => e.type)).not.toContain('channel.state_changed');

    // muting changes nothing of realtime: bo's sockets still get the channel's messages
    const m = await send(ana, ch.id, 'still delivered');
    for (const s of [b1, b2]) await s.waitFor('message.new', (e) => e?.data?.id === m.id);
  });

  it('documents the route, its errors, include and the state fields in OpenAPI', async () => {
    type Schema = {
      properties?: Record<string, { type?: string; nullable?: boolean; $ref?: string }>;
      $ref?: string;
    };
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string }[];
            requestBody?: { content: Record<string, { schema: Schema }> };
            responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
          }
        >
      >;
      components: { schemas: Record<string, Schema> };
    };
    const ref = (s?: Schema) => doc.components.schemas[(s?.$ref ?? '').split('/').pop() ?? '']!;
    const op = doc.paths['/v1/me/channels/{id}/state']?.patch;
    expect(op).toBeDefined();
    expect(Object.keys(op!.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '415',
      '500',
      '503',
    ]);
    const body = ref(op!.requestBody?.content['application/json']?.schema);
    expect(Object.keys(body.properties ?? {}).sort()).toEqual(['archived', 'hidden', 'muted_until']);
    expect(body.properties!.muted_until).toMatchObject({ type: 'string', nullable: true });
    const view = ref(op!.responses['200']!.content?.['application/json']?.schema);
    expect(view.properties).toMatchObject({
      muted_until: { type: 'string', nullable: true },
      hidden: { type: 'boolean' },
      archived: { type: 'boolean' },
      unread_count: {},
    });
    const inbox = doc.paths['/v1/me/channels']!.get!;
    expect(inbox.parameters?.map((x) => x.name)).toContain('include');
    expect(
      ref(inbox.responses['200']!.content?.['application/json']?.schema).properties?.channels,
    ).toBeDefined();
  });

  it('push: a muted member gets none for the channel’s messages, except those that mention them', async () => {
    // di is never muted: their push shows that a message's job has run
    const di = await ws.user('di');
    expect((await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di'] })).status).toBe(
      200,
    );
    for (const [u, token] of [
      [bo, 'tok-bo'],
      [cy, 'tok-cy'],
      [di, 'tok-di'],
    ] as const)
      expect((await u.api.post('/v1/me/devices', { token, platform: 'android' })).status).toBe(201);
    const tokensFor = (id: string, reqs: FcmRequest[] = fcm.requests) =>
      reqs
        .filter((r) => (r.body.message as { data?: { message_id?: string } }).data?.message_id === id)
        .map((r) => r.body.message.token)
        .sort();
    const pushed = async (m: Msg, expected: string[]) => {
      await until(`the push of "${m.content}"`, () => tokensFor(m.id).includes('tok-di'));
      await sleep(300); // one multicast per message: nothing more comes
      expect(tokensFor(m.id)).toEqual([...expected, 'tok-di'].sort());
    };

    await setState(bo, { muted_until: 'forever' });
    await pushed(await send(ana, ch.id, 'plain'), ['tok-cy']);
    await pushed(await send(ana, ch.id, { content: 'hey @bo', mentions: ['bo'] }), ['tok-bo', 'tok-cy']);
    await pushed(await send(ana, ch.id, { content: 'hey @cy', mentions: ['cy'] }), ['tok-cy']);

    // a mute until a time in the future holds too; one that has passed does not
    await setState(bo, { muted_until: new Date(Date.now() + 60_000).toISOString() });
    await setState(cy, { muted_until: new Date(Date.now() + 60_000).toISOString() });
    await pushed(await send(ana, ch.id, 'both muted'), []);
    await pushed(await send(ana, ch.id, { content: 'both muted, @bo and @cy', mentions: ['bo', 'cy'] }), [
      'tok-bo',
      'tok-cy',
    ]);
    await setState(cy, { muted_until: '2020-01-01T00:00:00.000Z' });
    await pushed(await send(ana, ch.id, 'cy no longer muted'), ['tok-cy']);

    // hidden and archived do not mute; null unmutes
    await setState(bo, { muted_until: null, hidden: true, archived: true });
    await pushed(await send(ana, ch.id, 'unmuted'), ['tok-bo', 'tok-cy']);
  });
});
