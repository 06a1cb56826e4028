import { DataSource } from 'typeorm';
import { group } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket, sleep } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

interface Reminder {
  id: string;
  message_id: string;
  channel_id: string;
  channel_external_id: string;
  remind_at: string | null;
  status: 'saved' | 'upcoming' | 'due';
  fired_at: string | null;
  created_at: string;
  updated_at: string;
  message: { id: string; content: string };
}

const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

/** CONTRACT §25's reminders, fired by the one scheduler: on the embedded database and on PostgreSQL. */
describe('reminders', () => {
  let t: TestApp;
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ SERVICE_SCHEDULER_INTERVAL_MS: '200' });
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

  const path = (m: { id: string }) => `/v1/messages/${m.id}/reminder`;
  const send = async (u: TestUser, content: string) => {
    const res = await u.api.post(`/v1/channels/${ch.id}/messages`, { content });
    expect(res.status).toBe(201);
    return res.body as { id: string; content: string };
  };
  const list = async (u: TestUser, filter?: string) => {
    const res = await u.api.get(`/v1/me/reminders${filter ? `?filter=${filter}` : ''}`);
    expect(res.status).toBe(200);
    return res.body.reminders as Reminder[];
  };

  it('fires once at remind_at: notification.reminder_due to the user’s own sockets, webhook reminder.due without the content, listed as due', async () => {
    const url = rx.url(200);
    await createWebhook(ws, url, ['reminder.due', 'message.created']);
    const m = await send(ana, `the plan ${Date.now()}`);
    const sinceBo = (await bo.api.get('/v1/me/sync')).body.next_cursor as string;
    const sinceAna = (await ana.api.get('/v1/me/sync')).body.next_cursor as string;
    const bo1 = await connectSocket(t.baseUrl, bo.token);
    const bo2 = await connectSocket(t.baseUrl, bo.token);
    const anaSocket = await connectSocket(t.baseUrl, ana.token);
    const at = ahead(1500);
    const created = await bo.api.post(path(m), { remind_at: at });
    expect(created.status).toBe(201);
    const r = created.body as Reminder;
    expect(r).toEqual({
      id: expect.any(String),
      message_id: m.id,
      channel_id: ch.id,
      channel_external_id: ch.external_id,
      remind_at: at,
      status: 'upcoming',
      fired_at: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.created_at,
      message: expect.objectContaining({ id: m.id, content: m.content }),
    });
    expect((await list(bo, 'upcoming')).map((x) => x.id)).toEqual([r.id]);

    for (const s of [bo1, bo2]) {
      const due = await s.waitFor('notification.reminder_due', (e) => e.data.reminder.id === r.id, 10_000);
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at) - 50);
      expect(due.seq ?? null).toBeNull();
      expect(due.data.message.id).toBe(m.id);
      expect(due.data.reminder).toMatchObject({ status: 'due', remind_at: at });
    }
    const [hook] = await rx.waitFor(url, { pred: (x) => eventOf(x) === 'reminder.due' });
    expect(hook!.json.data).toEqual({
      reminder: {
        id: r.id,
        message_id: m.id,
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        remind_at: at,
        user: { id: bo.id, external_id: 'bo', name: expect.anything() },
      },
    });
    expect(hook!.raw.toString()).not.toContain(m.content);

    const due = await list(bo, 'due');
    expect(due.map((x) => [x.id, x.status])).toEqual([[r.id, 'due']]);
    expect(Date.parse(due[0]!.fired_at!)).toBeGreaterThanOrEqual(Date.parse(at));
    expect(await list(bo, 'upcoming')).toEqual([]);

    // exactly once, and nobody else's: judged after a later event of the same log (ana's next message)
    const control = await send(ana, 'control');
    await bo1.waitFor('message.new', (e) => e.data.id === control.id);
    await anaSocket.waitFor('message.new', (e) => e.data.id === control.id);
    await sleep(500);
    expect(bo1.events.filter((e) => e.name === 'notification.reminder_due')).toHaveLength(1);
    expect(anaSocket.events.filter((e) => e.name === 'notification.reminder_due')).toEqual([]);
    expect(rx.received(url, (x) => eventOf(x) === 'reminder.due')).toHaveLength(1);

    // sync carries it to its user only
    const types = async (u: TestUser, since: string) => {
      const res = await u.api.get(`/v1/me/sync?since=${since}`);
      expect(res.status).toBe(200);
      return (res.body.events as { type: string }[]).map((e) => e.type);
    };
    expect((await types(bo, sinceBo)).filter((x) => x.includes('reminder'))).toEqual([
      'notification.reminder_due',
    ]);
    const hers = await types(ana, sinceAna);
    expect(hers).toContain('message.new'); // the control
    expect(hers.filter((x) => x.includes('reminder'))).toEqual([]);
  });

  it('saved for later never fires; PATCH arms, re-arms a fired one, un-arms; DELETE cancels', async () => {
    const [m1, m2, m3] = [await send(ana, 'one'), await send(ana, 'two'), await send(ana, 'three')];
    const socket = await connectSocket(t.baseUrl, bo.token);
    const saved = await bo.api.post(path(m1), {});
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ remind_at: null, status: 'saved', fired_at: null });
    expect((await bo.api.post(path(m2), { remind_at: ahead(1500) })).status).toBe(201);
    expect((await bo.api.post(path(m3), { remind_at: ahead(1500) })).status).toBe(201);
    expect((await bo.api.delete(path(m2))).status).toBe(204);
    const unarmed = await bo.api.patch(path(m3), { remind_at: null });
    expect(unarmed.status).toBe(200);
    expect(unarmed.body.status).toBe('saved');
    expect((await list(bo, 'saved')).map((x) => x.message_id).sort()).toEqual([m1.id, m3.id].sort());

    const armed = await bo.api.patch(path(m1), { remind_at: ahead(1500) });
    expect(armed.status).toBe(200);
    expect(armed.body.status).toBe('upcoming');
    await socket.waitFor('notification.reminder_due', (e) => e.data.message.id === m1.id, 10_000);
    // a fired reminder is re-armed by a new time, and fires again
    const again = await bo.api.patch(path(m1), { remind_at: ahead(1500) });
    expect(again.body).toMatchObject({ status: 'upcoming', fired_at: null });
    await socket.waitFor(
      'notification.reminder_due',
      (e) => e.data.message.id === m1.id && e.data.reminder.remind_at === again.body.remind_at,
      10_000,
    );
    await sleep(1500); // past the deleted and un-armed ones' times
    const control = await send(ana, 'control');
    await socket.waitFor('message.new', (e) => e.data.id === control.id);
    expect(
      socket.events
        .filter((e) => e.name === 'notification.reminder_due')
        .map((e) => e.payload.data.message.id),
    ).toEqual([m1.id, m1.id]);
    expect((await bo.api.delete(path(m2))).status).toBe(404);
  });

  it('refuses what §25 refuses: bad times 400, a second 409, non-members 403, unknown 404, unsent 422; private to the user; the acting-user rule', async () => {
    const m = await send(ana, 'hello');
    const gone = await send(ana, 'gone');
    expect((await ana.api.delete(`/v1/messages/${gone.id}`)).status).toBe(200);
    for (const remind_at of [
      new Date(Date.now() - 60_000).toISOString(),
      'tomorrow',
      ahead(400 * 86_400_000),
      7,
    ])
      expect([remind_at, (await bo.api.post(path(m), { remind_at })).body.error?.code]).toEqual([
        remind_at,
        'VALIDATION_ERROR',
      ]);
    expect((await bo.api.post(path(m), { remind_at: ahead(3600_000) })).status).toBe(201);
    const twice = await bo.api.post(path(m), {});
    expect([twice.status, twice.body.error.code]).toEqual([409, 'REMINDER_EXISTS']);
    const outsider = await cy.api.post(path(m), {});
    expect([outsider.status, outsider.body.error.code]).toEqual([403, 'NOT_A_MEMBER']);
    const unknown = await bo.api.post('/v1/messages/01900000-0000-7000-8000-0000000000aa/reminder', {});
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await bo.api.post('/v1/messages/not-an-id/reminder', {})).status).toBe(404);
    const unsent = await bo.api.post(path(gone), {});
    expect([unsent.status, unsent.body.error.code]).toEqual([422, 'MESSAGE_DELETED']);
    expect(await list(ana)).toEqual([]);
    expect((await ana.api.delete(path(m))).status).toBe(404);
    expect((await ana.api.patch(path(m), { remind_at: null })).status).toBe(404);
    expect((await list(bo)).length).toBe(1);
    expect((await bo.api.get('/v1/me/reminders?filter=soon')).status).toBe(400);
    expect((await ws.api.get('/v1/me/reminders')).status).toBe(403);

    // a backend key acts for the user it names
    expect((await ws.api.post(path(m), {})).body.error.code).toBe('VALIDATION_ERROR');
    const forAna = await ws.api.post(path(m), { user_external_id: 'ana' });
    expect(forAna.status).toBe(201);
    expect((await list(ana)).map((x) => x.message_id)).toEqual([m.id]);
    expect((await ws.api.delete(`${path(m)}?user_external_id=ana`)).status).toBe(204);
    expect(await list(ana)).toEqual([]);
  });

  it('takes times up to a year ahead; 1,000 reminders per user, a repeat still REMINDER_EXISTS at the cap', async () => {
    const m = await send(ana, 'far');
    const year = new Date();
    year.setUTCFullYear(year.getUTCFullYear() + 1);
    const tooFar = await bo.api.post(path(m), { remind_at: new Date(year.getTime() + 60_000).toISOString() });
    expect([tooFar.status, tooFar.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const farthest = await bo.api.post(path(m), {
      remind_at: new Date(year.getTime() - 60_000).toISOString(),
    });
    expect(farthest.status).toBe(201);
    // 999 more reminders of bo's, on messages made for it
    const db = t.app.get(DataSource);
    await db.query(
      `WITH ms AS (
         INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), c.workspace_id, c.id, $2::uuid, $2::text, 'text', 'filler ' || g,
                now() - make_interval(secs => g) FROM channels c, generate_series(1, 999) g WHERE c.id = $1
         RETURNING id, workspace_id, channel_id)
       INSERT INTO reminders (id, workspace_id, channel_id, user_id, message_id, remind_at, created_at, updated_at)
       SELECT gen_random_uuid(), ms.workspace_id, ms.channel_id, $3::uuid, ms.id, NULL, now(), now() FROM ms`,
      [ch.id, ana.id, bo.id],
    );
    const over = await bo.api.post(path(await send(ana, 'one too many')), {});
    expect([over.status, over.body.error.code]).toEqual([409, 'REMINDER_LIMIT']);
    const again = await bo.api.post(path(m), {});
    expect([again.status, again.body.error.code]).toEqual([409, 'REMINDER_EXISTS']);
    expect((await bo.api.delete(path(m))).status).toBe(204);
    expect((await bo.api.post(path(m), {})).status).toBe(201); // a freed place is taken again
  });

  it('a reminder on a message by a user the owner blocks since is listed nowhere and fires silently', async () => {
    const m = await send(ana, 'from ana');
    const r = await bo.api.post(path(m), { remind_at: ahead(1500) });
    expect(r.status).toBe(201);
    const socket = await connectSocket(t.baseUrl, bo.token);
    expect((await bo.api.post('/v1/me/blocks', { external_id: 'ana' })).status).toBe(201);
    expect(await list(bo)).toEqual([]);
    await sleep(2500);
    const db = t.app.get(DataSource);
    const [row] = await db.query(`SELECT fired_at FROM reminders WHERE id = $1`, [r.body.id]);
    expect(row.fired_at).not.toBeNull(); // it came due, and said nothing
    const other = await group(ws, 'cy', ['bo']);
    const control = await cy.api.post(`/v1/channels/${other.id}/messages`, { content: 'control' });
    await socket.waitFor('message.new', (e) => e.data.id === control.body.id, 10_000);
    expect(socket.events.filter((e) => e.name === 'notification.reminder_due')).toEqual([]);
    // the message itself, sent before the block, may still reach the socket (its delivery can lag the
    // connection under load); nothing else may carry its content
    const others = socket.events.filter((e) => !(e.name === 'message.new' && e.payload?.data?.id === m.id));
    expect(JSON.stringify(others)).not.toContain('from ana');
  });

  it('lists by filter in their orders, keyset-paginated', async () => {
    const ms = [];
    for (let i = 0; i < 5; i++) ms.push(await send(ana, `m${i}`));
    // upcoming soonest first, whatever order they were set in
    const times = [5, 3, 4, 1, 2].map((h) => ahead(h * 3600_000));
    for (const [i, m] of ms.entries())
      expect((await bo.api.post(path(m), { remind_at: times[i] })).status).toBe(201);
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const res = await bo.api.get(
        `/v1/me/reminders?filter=upcoming&limit=2${before ? `&before=${before}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...(res.body.reminders as Reminder[]).map((x) => x.remind_at!));
      before = res.body.has_more ? res.body.next_cursor : null;
    } while (before);
    expect(seen).toEqual([...times].sort());
    // no filter: newest created first
    const all = await list(bo);
    expect(all.map((x) => x.message_id)).toEqual(ms.map((m) => m.id).reverse());
  });

  it('unsending the message or leaving the channel deletes its reminders silently', async () => {
    const m1 = await send(ana, 'unsend me');
    const m2 = await send(ana, 'stay');
    expect((await bo.api.post(path(m1), { remind_at: ahead(1500) })).status).toBe(201);
    expect((await bo.api.post(path(m2), {})).status).toBe(201);
    const socket = await connectSocket(t.baseUrl, bo.token);
    expect((await ana.api.delete(`/v1/messages/${m1.id}`)).status).toBe(200);
    expect((await list(bo)).map((x) => x.message_id)).toEqual([m2.id]);
    expect((await bo.api.delete(`/v1/me/channels/${ch.id}/members/bo`)).status).toBeLessThan(300);
    expect(await list(bo)).toEqual([]);
    await sleep(1500);
    const other = await group(ws, 'ana', ['bo']);
    const control = await ana.api.post(`/v1/channels/${other.id}/messages`, { content: 'control' });
    await socket.waitFor('message.new', (e) => e.data.id === control.body.id, 10_000);
    expect(socket.events.filter((e) => e.name === 'notification.reminder_due')).toEqual([]);
  });
});
