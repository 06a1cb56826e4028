import { DataSource } from 'typeorm';
import { startTestApp, startTwoInstances, TestApp } from '../support/app';
import { Client, newWorkspace, TestUser } from '../support/fixtures';
import { group, send } from '../messages/helpers';
import { closeAllSockets, connectSocket, sleep } from '../support/socket';

/**
 * CONTRACT §18's "the next message from anyone else unhides it" is read from the send path's counters
 * (message_count, sent_count), recorded at hide time under the channel's order lock. Hides racing sends
 * on PostgreSQL: the hider's own messages never unhide the channel, and another member's message unhides
 * it exactly when it was sent after the hide.
 */
describe('hiding a channel while messages are sent (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '10000' });
  });
  afterAll(async () => t.close());

  const hiddenFor = async (u: TestUser, channelId: string): Promise<boolean> => {
    const res = await u.api.get('/v1/me/channels?limit=100&include=hidden');
    const c = (res.body.channels as { id: string; hidden: boolean }[]).find((x) => x.id === channelId);
    if (!c) throw new Error('channel not listed');
    return c.hidden;
  };

  it('own concurrent sends keep it hidden; another member’s send unhides it iff it came after the hide', async () => {
    const ws = await newWorkspace(t);
    const [, bo, cy] = await ws.users('ana', 'bo', 'cy');
    const ch = await group(ws, 'ana', ['bo', 'cy']);
    const db = t.app.get(DataSource);
    const outcomes = new Set<boolean>();
    for (let round = 0; round < 12; round++) {
      const hide = bo!.api.patch(`/v1/me/channels/${ch.id}/state`, { hidden: true });
      const own = Array.from({ length: 4 }, (_, i) => send(bo!, ch.id, `own ${round}.${i}`));
      const theirs = round % 3 === 2 ? [] : [send(cy!, ch.id, `theirs ${round}`)];
      const [res, sent] = await Promise.all([hide, Promise.all([...own, ...theirs])]);
      expect(res.status).toBe(200);
      const other = sent.slice(4);
      const [row] = await db.query<{ hidden_at: string }[]>(
        `SELECT to_char(hidden_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS hidden_at FROM channel_members WHERE channel_id = $1 AND user_id = $2`,
        [ch.id, bo!.id],
      );
      let after = false;
      if (other.length) {
        const [m] = await db.query<{ created: string }[]>(
          `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created FROM messages WHERE id = $1`,
          [other[0]!.id],
        );
        after = m!.created > row!.hidden_at;
      }
      const hidden = await hiddenFor(bo!, ch.id);
      expect(hidden).toBe(!after);
      outcomes.add(hidden);
      // the next round starts from a visible channel
      await bo!.api.patch(`/v1/me/channels/${ch.id}/state`, { hidden: false });
    }
    expect(outcomes.has(true)).toBe(true);
  });
});

describe('channel.state_changed with two instances (PostgreSQL + Redis)', () => {
  let one: TestApp;
  let two: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ one, two, close } = await startTwoInstances('ust'));
  });
  afterAll(async () => {
    closeAllSockets();
    await close();
  });

  it('a change made through one instance reaches the caller’s sockets on both, and no one else’s', async () => {
    const ws = await newWorkspace(one);
    const [ana, bo] = await ws.users('ana', 'bo');
    const ch = await group(ws, 'ana', ['bo']);
    const b1 = await connectSocket(one.baseUrl, bo!.token);
    const b2 = await connectSocket(two.baseUrl, bo!.token);
    const a2 = await connectSocket(two.baseUrl, ana!.token);
    const boViaTwo = new Client(two, `Bearer ${bo!.token}`);
    expect((await boViaTwo.patch(`/v1/me/channels/${ch.id}/state`, { hidden: true })).status).toBe(200);
    for (const s of [b1, b2]) {
      const env = await s.waitFor('channel.state_changed', (e) => e?.data?.channel_id === ch.id);
      expect(env.data).toEqual({ channel_id: ch.id, muted_until: null, hidden: true, archived: false });
      expect(env.seq).toBeUndefined();
    }
    await sleep(500);
    expect(a2.events.filter((e) => e.name === 'channel.state_changed')).toEqual([]);
    expect([b1, b2].map((s) => s.events.filter((e) => e.name === 'channel.state_changed').length)).toEqual([
      1, 1,
    ]);
  });
});
