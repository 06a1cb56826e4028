import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { eventsOf, Msg, Page, room } from './helpers';

const pinPath = (id: string) => `/v1/messages/${id}/pin`;

/** CONTRACT §16's limit and unsend rule under real concurrency (PostgreSQL, many connections). */
describe('pinned messages under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function systemMessages(
    ws: Awaited<ReturnType<typeof room>>['ws'],
    channelId: string,
    n: number,
  ): Promise<Msg[]> {
    const out: Msg[] = [];
    for (let i = 0; i < n; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, n - i) }, (_, k) =>
          ws.api.post('/v1/messages', { channel_id: channelId, content: `m${i + k}`, system: true }),
        ),
      );
      for (const r of batch) {
        if (r.status !== 201) throw new Error(`setup: send answered ${r.status} ${r.text}`);
        out.push(r.body as Msg);
      }
    }
    return out;
  }

  it('60 concurrent pins of 60 messages leave exactly 50 pinned; the other 10 are 409 PIN_LIMIT', async () => {
    const { ws, ch, ana } = await room(t);
    const msgs = await systemMessages(ws, ch.id, 60);
    // half by the backend key, half by the group admin: both go through the channel's write session
    const answers = await Promise.all(msgs.map((m, i) => (i % 2 ? ws.api : ana.api).post(pinPath(m.id))));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('PIN_LIMIT');

    const rows: { n: number }[] = await t.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM message_pins WHERE channel_id = $1`, [ch.id]);
    expect(rows[0]!.n).toBe(50);
    const listed = (await ws.api.get(`/v1/channels/${ch.id}/pins?limit=100`)).body as Page;
    const winners = new Set(answers.flatMap((r, i) => (r.status === 200 ? [msgs[i]!.id] : [])));
    expect(new Set(listed.messages.map((m) => m.id))).toEqual(winners);
    // every pin that was answered 200 is announced once, with contiguous seqs after the sends
    const log = await eventsOf(t, ch.id);
    const pinned = log.filter((e) => e.type === 'message.pinned');
    expect(pinned).toHaveLength(50);
    expect(new Set(pinned.map((e) => (e.payload.message as { id: string }).id))).toEqual(winners);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    // pinned_at follows the order the pins committed in (the channel lock's order)
    const byTime = [...pinned]
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((e) => Date.parse((e.payload.message as { pinned_at: string }).pinned_at));
    expect([...byTime].sort((a, b) => a - b)).toEqual(byTime);
  });

  it('pins racing with unsends never leave an unsent message pinned', async () => {
    const { ws, ch, ana } = await room(t);
    const msgs = await systemMessages(ws, ch.id, 20);
    const answers = await Promise.all(
      msgs.flatMap((m) => [ana.api.post(pinPath(m.id)), ws.api.delete(`/v1/messages/${m.id}`)]),
    );
    for (let i = 0; i < answers.length; i += 2) {
      expect([200, 422]).toContain(answers[i]!.status); // the pin: before the unsend, or refused after it
      expect(answers[i + 1]!.status).toBe(200);
    }
    const rows: { n: number }[] = await t.app
      .get(DataSource)
      .query(
        `SELECT count(*)::int AS n FROM message_pins p JOIN messages m ON m.id = p.message_id WHERE p.channel_id = $1`,
        [ch.id],
      );
    expect(rows[0]!.n).toBe(0);
    expect(((await ws.api.get(`/v1/channels/${ch.id}/pins`)).body as Page).messages).toEqual([]);
    // each pin that won the race is followed by its unsend's unpin
    const log = (await eventsOf(t, ch.id)).filter(
      (e) => e.type !== 'channel.created' && e.type !== 'message.created',
    );
    for (const m of msgs) {
      const mine = log.filter((e) => (e.payload.message as { id: string }).id === m.id).map((e) => e.type);
      const pinnedFirst = answers[msgs.indexOf(m) * 2]!.status === 200;
      expect(mine).toEqual(
        pinnedFirst ? ['message.pinned', 'message.deleted', 'message.unpinned'] : ['message.deleted'],
      );
    }
  });
});
