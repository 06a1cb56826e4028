import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket, sleep, TestSocket } from '../support/socket';
import { createWebhook, poll } from '../webhooks/helpers';
import { group, Msg } from '../messages/helpers';
import { REALTIME_NAME } from '../../src/realtime/realtime-events';
import { isWebhookEvent, WEBHOOK_EVENTS } from '../../src/webhooks/webhook-events';
import { newWorkspace, TestUser } from '../support/fixtures';

interface LogRow {
  id: string;
  seq: number;
  type: string;
}

/**
 * The channel write session under real parallelism (PostgreSQL, many connections): 32 writers of one
 * channel mixing sends, reactions, read receipts and membership changes. Every channel event takes the
 * next seq in commit order, and every follower of the log (realtime, sync, webhooks) sees each event
 * exactly once, in seq order.
 */
describe('one channel write session (PostgreSQL, 32 concurrent writers)', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '10000' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    closeAllSockets();
    await receiver.close();
    await t.close();
  });

  it('keeps seq contiguous and in commit order, and no follower loses or repeats an event', async () => {
    const ws = await newWorkspace(t);
    await ws.api.patch('/v1/workspace/settings', { system_messages_for_membership: true });
    const names = Array.from({ length: 8 }, (_, i) => `w${i}`);
    const users = await ws.users('watcher', ...names, 'guest0', 'guest1', 'guest2', 'guest3');
    const watcher = users[0]!;
    const writers: TestUser[] = users.slice(1, 9);
    const hook = await createWebhook(ws, receiver.url(200, 'all'), [...WEBHOOK_EVENTS]);
    expect(hook.id).toBeDefined();
    const ch = await group(ws, 'watcher', names);
    const socket: TestSocket = await connectSocket(t.baseUrl, watcher.token);
    const syncFrom = (await watcher.api.get('/v1/me/sync')).body.next_cursor as string;
    const seed = (await writers[0]!.api.post(`/v1/channels/${ch.id}/messages`, { content: 'seed' }))
      .body as Msg;

    // 32 writers at once: 16 sends, 8 reactions, 4 read receipts, 4 membership changes (with system notices)
    const emojis = ['👍', '🎉', '🔥', '❤️'];
    const ops: Promise<{ status: number }>[] = [];
    for (let i = 0; i < 16; i++)
      ops.push(writers[i % 8]!.api.post(`/v1/channels/${ch.id}/messages`, { content: `m${i}` }));
    for (let i = 0; i < 8; i++)
      ops.push(writers[i]!.api.post(`/v1/messages/${seed.id}/reactions`, { emoji: emojis[i % 4] }));
    for (let i = 0; i < 4; i++) ops.push(writers[i]!.api.post(`/v1/channels/${ch.id}/read`, {}));
    for (let i = 0; i < 4; i++)
      ops.push(ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: [`guest${i}`] }));
    const answers = await Promise.all(ops);
    expect(answers.map((r) => r.status).filter((s) => s >= 300)).toEqual([]);

    const db = t.app.get(DataSource);
    const bySeq: LogRow[] = await db.query(
      `SELECT id, seq::int AS seq, type FROM events WHERE channel_id = $1 ORDER BY seq`,
      [ch.id],
    );
    // contiguous from 1
    expect(bySeq.map((e) => e.seq)).toEqual(bySeq.map((_, i) => i + 1));
    // log order (what every follower reads) is seq order
    const byLog: LogRow[] = await db.query(
      `SELECT id, seq::int AS seq, type FROM events WHERE channel_id = $1 ORDER BY tx_id, position`,
      [ch.id],
    );
    expect(byLog.map((e) => e.seq)).toEqual(bySeq.map((e) => e.seq));
    // 1 seed + 16 sends + 4 system notices, 8 reactions added (some replacing none), 4 reads, 4 joins
    const count = (type: string) => bySeq.filter((e) => e.type === type).length;
    expect(count('message.created')).toBe(21);
    expect(count('message.reaction.added')).toBe(8);
    expect(count('channel.read')).toBe(4);
    expect(count('member.joined')).toBe(4);
    const created: string[] = bySeq.filter((e) => e.type === 'message.created').map((e) => e.id);
    expect(new Set(created).size).toBe(created.length);

    // realtime: the watcher's socket got every event of the channel that has a realtime form, once.
    // docs/REALTIME.md: the users' sends go out at once from the instance that committed them, in seq
    // order among themselves; the rest goes through the log's publisher, in seq order too; a send may
    // overtake an event of the other kind just before it (the client sees a jump and fills it)
    const visible = bySeq.filter((e) => (REALTIME_NAME as Record<string, unknown>)[e.type]).map((e) => e.seq);
    const sentLive = new Set(
      (
        await db.query<{ seq: number }[]>(
          `SELECT seq::int AS seq FROM events
            WHERE channel_id = $1 AND type = 'message.created' AND payload->'message'->>'type' <> 'system'`,
          [ch.id],
        )
      ).map((e) => e.seq),
    );
    const lastVisible = visible[visible.length - 1]!;
    await poll(
      async () =>
        socket.events.some((e) => e.payload?.channel_id === ch.id && e.payload?.seq === lastVisible),
      `the socket to reach seq ${lastVisible}`,
    );
    await sleep(300); // anything late or repeated would arrive now
    const live = socket.events
      .filter((e) => e.payload?.channel_id === ch.id && typeof e.payload?.seq === 'number')
      .map((e) => e.payload.seq as number);
    expect([...live].sort((a, b) => a - b)).toEqual(visible.filter((x) => x >= Math.min(...live)));
    const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);
    expect(increasing(live.filter((x) => sentLive.has(x)))).toBe(true);
    expect(increasing(live.filter((x) => !sentLive.has(x)))).toBe(true);
    expect(Math.min(...live)).toBeLessThanOrEqual(2); // the socket was connected before the seed message

    // sync: the same events once each, in seq order
    const synced: number[] = [];
    let cursor = syncFrom;
    for (let page = 0; page < 20; page++) {
      const res = await watcher.api.get(`/v1/me/sync?since=${cursor}&limit=100`);
      expect(res.status).toBe(200);
      for (const e of res.body.events as { channel_id?: string; seq?: number }[])
        if (e.channel_id === ch.id && typeof e.seq === 'number') synced.push(e.seq);
      cursor = res.body.next_cursor;
      if (!res.body.has_more) break;
    }
    expect(synced).toEqual(visible.filter((x) => x >= synced[0]!));
    expect(synced[synced.length - 1]).toBe(lastVisible);

    // webhooks: one delivery per subscribed event, none missing, none repeated
    const wanted = new Set(bySeq.filter((e) => isWebhookEvent(e.type)).map((e) => e.id));
    const deliveredIds = () =>
      receiver.requests.map((r) => r.json?.event_id as string).filter((id) => wanted.has(id));
    await poll(
      async () => new Set(deliveredIds()).size === wanted.size,
      'every channel event to be delivered',
      30_000,
    );
    await sleep(300);
    expect(deliveredIds().length).toBe(wanted.size);
  });

  it('idempotent replays raced with other writers yield one row and one event', async () => {
    const ws = await newWorkspace(t);
    const [ana, bo] = await ws.users('ana', 'bo');
    const ch = await group(ws, 'ana', ['bo']);
    const answers = await Promise.all([
      ...Array.from({ length: 16 }, () =>
        ana!.api.post(`/v1/channels/${ch.id}/messages`, { content: 'once', idempotency_key: 'k1' }),
      ),
      ...Array.from({ length: 16 }, (_, i) =>
        bo!.api.post(`/v1/channels/${ch.id}/messages`, { content: `b${i}` }),
      ),
    ]);
    const mine = answers.slice(0, 16);
    expect(mine.filter((r) => r.status === 201)).toHaveLength(1);
    expect(mine.filter((r) => r.status === 200)).toHaveLength(15);
    expect(new Set(mine.map((r) => (r.body as Msg).id)).size).toBe(1);
    const rows: { n: number }[] = await t.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM messages WHERE channel_id = $1 AND idempotency_key = 'k1'`, [
        ch.id,
      ]);
    expect(rows[0]!.n).toBe(1);
    const events: { seq: number; type: string; payload: { message?: { id: string } } }[] = await t.app
      .get(DataSource)
      .query(`SELECT seq::int AS seq, type, payload FROM events WHERE channel_id = $1 ORDER BY seq`, [ch.id]);
    expect(events.filter((e) => e.payload.message?.id === (mine[0]!.body as Msg).id)).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });
});
