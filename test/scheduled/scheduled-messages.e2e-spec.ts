import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket, sleep } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

interface Scheduled {
  id: string;
  channel_id: string;
  channel_external_id: string;
  thread_id: string | null;
  show_in_channel: boolean;
  parent_id: string | null;
  content: string;
  attachment_url: string | null;
  mentions: string[];
  metadata: Record<string, unknown>;
  scheduled_at: string;
  status: 'pending' | 'failed';
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
}

const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

/** CONTRACT §25's scheduled messages, sent by the one scheduler: on the embedded database and on PostgreSQL. */
describe('scheduled messages', () => {
  let t: TestApp;
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({
      SERVICE_SCHEDULER_INTERVAL_MS: '200',
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '3',
    });
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
    await rx.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo']);
  });
  afterEach(() => closeAllSockets());

  const schedule = async (u: TestUser, body: Record<string, unknown>) => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, body);
    expect(res.status).toBe(202);
    return res.body.scheduled_message as Scheduled;
  };
  const list = async (u: TestUser, query = '') => {
    const res = await u.api.get(`/v1/me/scheduled${query}`);
    expect(res.status).toBe(200);
    return res.body as { scheduled_messages: Scheduled[]; has_more: boolean; next_cursor: string | null };
  };
  const history = async (u: TestUser | TestWorkspace) => {
    const res = await u.api.get(`/v1/channels/${ch.id}/messages`);
    expect(res.status).toBe(200);
    return res.body.messages as { id: string; content: string; user: { external_id: string } | null }[];
  };
  const syncTypes = async (u: TestUser, since: string) => {
    const res = await u.api.get(`/v1/me/sync?since=${since}`);
    expect(res.status).toBe(200);
    return (res.body.events as { type: string }[]).map((e) => e.type);
  };

  it('is seen by nobody until scheduled_at, then is a normal send: message.new with seq, webhook, scheduled.sent to its author only', async () => {
    const url = rx.url(200);
    await createWebhook(ws, url, ['message.created']);
    const sinceAna = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
    const sinceBo = (await bo.api.get('/v1/me/sync')).body.next_cursor as string;
    const anaSocket = await connectSocket(t.baseUrl, ana.token);
    const boSocket = await connectSocket(t.baseUrl, bo.token);
    const at = ahead(2000);
    const s = await schedule(bo, { content: 'see you later', scheduled_at: at, metadata: { k: 1 } });
    expect(s).toEqual({
      id: expect.any(String),
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      thread_id: null,
      show_in_channel: false,
      parent_id: null,
      content: 'see you later',
      attachment_url: null,
      mentions: [],
      metadata: { k: 1 },
      scheduled_at: at,
      status: 'pending',
      error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await list(bo)).scheduled_messages.map((x) => x.id)).toEqual([s.id]);
    expect((await list(ana)).scheduled_messages).toEqual([]);
    expect(await history(ana)).toEqual([]);
    expect(await history(ws)).toEqual([]);

    const fired = await anaSocket.waitFor('message.new', (e) => e.data.content === 'see you later', 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
    expect(anaSocket.events.filter((e) => e.name === 'message.new')).toHaveLength(1); // nothing before it
    expect(rx.received(url).filter((x) => x.at < Date.parse(at))).toEqual([]);
    expect(fired.seq).toEqual(expect.any(Number));
    expect(fired.data.user.external_id).toBe('bo');
    expect(fired.data.metadata).toEqual({ k: 1 });
    expect(Date.parse(fired.data.created_at)).toBeGreaterThanOrEqual(Date.parse(at));
    const sent = await boSocket.waitFor('scheduled.sent', (e) => e.data.scheduled_message_id === s.id);
    expect(sent.data.message).toMatchObject({ id: fired.data.id, content: 'see you later', user_id: bo.id });
    const [hook] = await rx.waitFor(url, { pred: (x) => eventOf(x) === 'message.created' });
    expect(hook!.json.data.message.id).toBe(fired.data.id);
    expect((await history(ana)).map((m) => m.id)).toEqual([fired.data.id]);
    expect((await list(bo)).scheduled_messages).toEqual([]);

    // scheduled.sent is bo's own: judged after a later event of the log
    const control = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'control' });
    await anaSocket.waitFor('message.new', (e) => e.data.id === control.body.id);
    expect(anaSocket.events.filter((e) => e.name.startsWith('scheduled.'))).toEqual([]);
    expect(await syncTypes(bo, sinceBo)).toContain('scheduled.sent');
    expect((await syncTypes(ana, sinceAna)).filter((x) => x.startsWith('scheduled.'))).toEqual([]);
    expect(rx.received(url, (x) => eventOf(x)?.startsWith('scheduled.') ?? false)).toEqual([]);
  });

  it('checks what it can when scheduling: time bounds, membership, size, references, the socket and system messages refuse it', async () => {
    const bad = async (
      u: TestUser | TestWorkspace,
      body: Record<string, unknown>,
      status: number,
      code: string,
      path = `/v1/channels/${ch.id}/messages`,
    ) => {
      const res = await u.api.post(path, body);
      expect([res.status, res.body.error?.code]).toEqual([status, code]);
    };
    await bad(bo, { content: 'x', scheduled_at: ahead(-1000) }, 400, 'VALIDATION_ERROR');
    await bad(bo, { content: 'x', scheduled_at: ahead(500) }, 400, 'VALIDATION_ERROR');
    await bad(bo, { content: 'x', scheduled_at: ahead(31 * 24 * 3600e3) }, 400, 'VALIDATION_ERROR');
    await bad(bo, { content: 'x', scheduled_at: 'tomorrow' }, 400, 'VALIDATION_ERROR');
    await bad(cy, { content: 'x', scheduled_at: ahead(60e3) }, 403, 'NOT_A_MEMBER');
    await bad(
      bo,
      { content: 'x', scheduled_at: ahead(60e3) },
      404,
      'NOT_FOUND',
      '/v1/channels/nope/messages',
    );
    await bad(bo, { content: '', scheduled_at: ahead(60e3) }, 400, 'VALIDATION_ERROR');
    await bad(bo, { content: 'x', mentions: ['cy'], scheduled_at: ahead(60e3) }, 400, 'VALIDATION_ERROR');
    await bad(bo, { content: 'x'.repeat(9000), scheduled_at: ahead(60e3) }, 413, 'MESSAGE_TOO_LARGE');
    await bad(
      ws,
      { channel_id: ch.id, content: 'x', system: true, scheduled_at: ahead(60e3) },
      400,
      'VALIDATION_ERROR',
      '/v1/messages',
    );
    const socket = await connectSocket(t.baseUrl, bo.token);
    const ack = await socket.emitAck('message.send', {
      channel_id: ch.id,
      content: 'x',
      scheduled_at: ahead(60e3),
    });
    expect(ack.error?.code).toBe('VALIDATION_ERROR');
    expect((await list(bo)).scheduled_messages).toEqual([]);

    // an idempotency key answers the same scheduled message with 200
    const body = { content: 'once', scheduled_at: ahead(60e3), idempotency_key: 'k1' };
    const first = await bo.api.post(`/v1/channels/${ch.id}/messages`, body);
    const again = await bo.api.post(`/v1/channels/${ch.id}/messages`, body);
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.body.scheduled_message.id).toBe(first.body.scheduled_message.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await list(bo)).scheduled_messages).toHaveLength(1);
  });

  it('PATCH changes it and DELETE cancels it before it fires; other users get 404, and so does a sent one', async () => {
    const socket = await connectSocket(t.baseUrl, ana.token);
    const s1 = await schedule(bo, { content: 'draft wording', scheduled_at: ahead(60e3) });
    const s2 = await schedule(bo, { content: 'never sent', scheduled_at: ahead(1500) });
    const at = ahead(1500);
    const changed = await bo.api.patch(`/v1/scheduled/${s1.id}`, {
      content: 'final wording',
      scheduled_at: at,
      mentions: ['ana'],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.scheduled_message).toMatchObject({
      id: s1.id,
      content: 'final wording',
      scheduled_at: at,
      mentions: ['ana'],
    });
    for (const res of [
      await ana.api.patch(`/v1/scheduled/${s1.id}`, { content: 'hijacked' }),
      await ana.api.delete(`/v1/scheduled/${s1.id}`),
      await bo.api.delete(`/v1/scheduled/not-an-id`),
    ])
      expect([res.status, res.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await bo.api.delete(`/v1/scheduled/${s2.id}`)).status).toBe(204);
    const fired = await socket.waitFor('message.new', (e) => e.data.content === 'final wording', 10_000);
    expect(fired.data.mentions.map((x: { external_id: string }) => x.external_id)).toEqual(['ana']);
    await socket.waitFor('notification.mention', (e) => e.data.message.id === fired.data.id);
    await sleep(1500); // s2's time passed too
    const control = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'control' });
    await socket.waitFor('message.new', (e) => e.data.id === control.body.id);
    expect(socket.events.filter((e) => e.name === 'message.new').map((e) => e.payload.data.content)).toEqual([
      'final wording',
      'control',
    ]);
    const late = await bo.api.patch(`/v1/scheduled/${s1.id}`, { content: 'too late' });
    expect([late.status, late.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('refused when it fires (frozen channel): listed as failed with scheduled.failed; re-timed, it is sent', async () => {
    const boSocket = await connectSocket(t.baseUrl, bo.token);
    const s = await schedule(bo, { content: 'into the ice', scheduled_at: ahead(1500) });
    expect((await ws.api.patch(`/v1/channels/${ch.id}`, { frozen: true })).status).toBe(200);
    const failed = await boSocket.waitFor(
      'scheduled.failed',
      (e) => e.data.scheduled_message_id === s.id,
      10_000,
    );
    expect(failed.data.error.code).toBe('CHANNEL_FROZEN');
    const [listed] = (await list(bo)).scheduled_messages;
    expect([listed!.id, listed!.status, listed!.error?.code]).toEqual([s.id, 'failed', 'CHANNEL_FROZEN']);
    expect(await history(ws)).toEqual([]);
    expect((await ws.api.patch(`/v1/channels/${ch.id}`, { frozen: false })).status).toBe(200);
    const retimed = await bo.api.patch(`/v1/scheduled/${s.id}`, { scheduled_at: ahead(1200) });
    expect(retimed.body.scheduled_message).toMatchObject({ status: 'pending', error: null });
    await boSocket.waitFor('scheduled.sent', (e) => e.data.scheduled_message_id === s.id, 10_000);
    expect((await history(ws)).map((m) => m.content)).toEqual(['into the ice']);
    expect(boSocket.events.filter((e) => e.name === 'scheduled.failed')).toHaveLength(1);
  });

  it('a member who left before the time: failed NOT_A_MEMBER, nothing sent', async () => {
    const boSocket = await connectSocket(t.baseUrl, bo.token);
    const s = await schedule(bo, { content: 'gone by then', scheduled_at: ahead(1500) });
    expect((await ws.api.delete(`/v1/channels/${ch.id}/members/bo`)).status).toBeLessThan(300);
    const failed = await boSocket.waitFor(
      'scheduled.failed',
      (e) => e.data.scheduled_message_id === s.id,
      10_000,
    );
    expect(failed.data.error.code).toBe('NOT_A_MEMBER');
    expect(await history(ws)).toEqual([]);
  });

  it('is exempt from the rate limit and slow mode, and is a thread reply with its mentions when asked', async () => {
    expect((await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 600 })).status).toBe(200);
    const root = await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'root' });
    expect((await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'now' })).status).toBe(201);
    const slowed = await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'again' });
    expect(slowed.body.error.code).toBe('SLOW_MODE');
    const at = ahead(1500);
    // the rate limit is 3 a minute here: four scheduled sends at once all go
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await schedule(bo, { content: `later ${i}`, scheduled_at: at })).id);
    const reply = await schedule(bo, {
      content: 'in the thread',
      thread_id: root.body.id,
      mentions: ['ana'],
      scheduled_at: at,
    });
    expect(reply).toMatchObject({ thread_id: root.body.id, mentions: ['ana'] });
    const boSocket = await connectSocket(t.baseUrl, bo.token);
    for (const id of [...ids, reply.id])
      await boSocket.waitFor('scheduled.sent', (e) => e.data.scheduled_message_id === id, 10_000);
    expect((await history(ws)).map((m) => m.content).sort()).toEqual([
      'later 0',
      'later 1',
      'later 2',
      'later 3',
      'now',
      'root',
    ]);
    const replies = await ana.api.get(`/v1/messages/${root.body.id}/replies`);
    expect(replies.body.messages.map((m: { content: string }) => m.content)).toEqual(['in the thread']);
    expect(replies.body.messages[0].mentions.map((x: { external_id: string }) => x.external_id)).toEqual([
      'ana',
    ]);
  });

  it('takes the draft it was written in when scheduled, and leaves the draft written since when it is sent', async () => {
    const socket = await connectSocket(t.baseUrl, bo.token);
    expect(
      (await bo.api.put(`/v1/channels/${ch.id}/draft`, { content: 'see you at 9' })).status,
    ).toBeLessThan(300);
    const s = await schedule(bo, { content: 'see you at 9', scheduled_at: ahead(1500) });
    await socket.waitFor('draft.deleted', (e) => e.data.channel_id === ch.id);
    expect((await bo.api.get(`/v1/channels/${ch.id}/draft`)).status).toBe(404);
    expect(
      (await bo.api.put(`/v1/channels/${ch.id}/draft`, { content: 'something new' })).status,
    ).toBeLessThan(300);
    await socket.waitFor('scheduled.sent', (e) => e.data.scheduled_message_id === s.id, 10_000);
    expect((await bo.api.get(`/v1/channels/${ch.id}/draft`)).body.content).toBe('something new');
    expect(socket.events.filter((e) => e.name === 'draft.deleted')).toHaveLength(1);
  });

  it('keys are one namespace with sends: a retry after it was sent answers the message, and a send with a pending key is what it becomes', async () => {
    const body = { content: 'once only', scheduled_at: ahead(1200), idempotency_key: 'k-sched' };
    const first = await bo.api.post(`/v1/channels/${ch.id}/messages`, body);
    expect(first.status).toBe(202);
    const socket = await connectSocket(t.baseUrl, bo.token);
    const sent = await socket.waitFor(
      'scheduled.sent',
      (e) => e.data.scheduled_message_id === first.body.scheduled_message.id,
      10_000,
    );
    const retry = await bo.api.post(`/v1/channels/${ch.id}/messages`, { ...body, scheduled_at: ahead(60e3) });
    expect([retry.status, retry.body.scheduled_message, retry.body.message?.id]).toEqual([
      200,
      null,
      sent.data.message.id,
    ]);
    expect((await list(bo)).scheduled_messages).toEqual([]);

    // a pending one whose key a send takes first: at its time it is that message, not a second one
    const pending = await schedule(bo, {
      content: 'later',
      scheduled_at: ahead(1200),
      idempotency_key: 'k2',
    });
    const now = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
      content: 'now',
      idempotency_key: 'k2',
    });
    expect(now.status).toBe(201);
    const became = await socket.waitFor(
      'scheduled.sent',
      (e) => e.data.scheduled_message_id === pending.id,
      10_000,
    );
    expect(became.data.message.id).toBe(now.body.id);
    expect((await history(ws)).map((m) => m.content).sort()).toEqual(['now', 'once only']);
  });

  it('the backend schedules as a user, lists, changes and cancels for them; at most 100 per user', async () => {
    const res = await ws.api.post('/v1/messages', {
      channel_id: ch.external_id,
      user_external_id: 'bo',
      content: 'from the backend',
      scheduled_at: ahead(3600e3),
    });
    expect(res.status).toBe(202);
    const id = res.body.scheduled_message.id as string;
    const listed = await ws.api.get('/v1/users/bo/scheduled');
    expect(listed.body.scheduled_messages.map((x: Scheduled) => x.id)).toEqual([id]);
    expect((await ws.api.get('/v1/users/nobody/scheduled')).status).toBe(404);
    const noUser = await ws.api.patch(`/v1/scheduled/${id}`, { content: 'x' });
    expect([noUser.status, noUser.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const wrongUser = await ws.api.patch(`/v1/scheduled/${id}`, { content: 'x', user_external_id: 'ana' });
    expect(wrongUser.status).toBe(404);
    const changed = await ws.api.patch(`/v1/scheduled/${id}`, { content: 'changed', user_external_id: 'bo' });
    expect(changed.body.scheduled_message.content).toBe('changed');

    for (let i = 1; i < 100; i += 11) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(11, 100 - i) }, (_, k) =>
          bo.api.post(`/v1/channels/${ch.id}/messages`, {
            content: `n${i + k}`,
            scheduled_at: ahead(3600e3),
          }),
        ),
      );
      expect(batch.map((r) => r.status)).toEqual(batch.map(() => 202));
    }
    const over = await bo.api.post(`/v1/channels/${ch.id}/messages`, {
      content: 'too many',
      scheduled_at: ahead(3600e3),
    });
    expect([over.status, over.body.error.code]).toEqual([409, 'SCHEDULED_LIMIT']);
    const page = await list(bo, '?limit=60');
    expect(page.scheduled_messages).toHaveLength(60);
    const rest = await list(bo, `?limit=60&before=${encodeURIComponent(page.next_cursor!)}`);
    expect(rest.scheduled_messages).toHaveLength(40);
    expect(rest.has_more).toBe(false);
    expect((await ws.api.delete(`/v1/scheduled/${id}?user_external_id=bo`)).status).toBe(204);
    expect(
      (await bo.api.post(`/v1/channels/${ch.id}/messages`, { content: 'fits', scheduled_at: ahead(3600e3) }))
        .status,
    ).toBe(202);
  });
});
