import { startTestApp, TestApp } from '../support/app';
import { eventsOf, room } from '../messages/helpers';

/** Channel controls under real parallel writers (PostgreSQL, many connections). */
describe('channel controls under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '1000' });
  });
  afterAll(async () => t.close());

  it('slow mode: 12 parallel sends by one member store exactly one; the rest are 429 SLOW_MODE', async () => {
    const { ws, ch, bo } = await room(t);
    expect((await ws.api.patch(`/v1/channels/${ch.id}`, { slow_mode_seconds: 60 })).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        bo.api.post(`/v1/channels/${ch.id}/messages`, { content: `race ${i}` }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(429)]);
    for (const r of answers.filter((x) => x.status === 429)) {
      expect(r.body.error.code).toBe('SLOW_MODE');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    expect((await eventsOf(t, ch.id)).filter((e) => e.type === 'message.created')).toHaveLength(1);
  });

  it('a freeze racing with sends: every stored user message precedes the channel.updated that froze it', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const users = [ana, bo, cy];
    const sends = Array.from({ length: 24 }, (_, i) =>
      users[i % 3]!.api.post(`/v1/channels/${ch.id}/messages`, { content: `race ${i}` }),
    );
    const freeze = ws.api.patch(`/v1/channels/${ch.id}`, { frozen: true });
    const answers = await Promise.all(sends);
    expect((await freeze).status).toBe(200);
    for (const r of answers) {
      if (r.status !== 201) expect([r.status, r.body.error.code]).toEqual([403, 'CHANNEL_FROZEN']);
    }
    const log = await eventsOf(t, ch.id);
    const frozeAt = log.find((e) => e.type === 'channel.updated')!.seq!;
    const created = log.filter((e) => e.type === 'message.created');
    expect(created).toHaveLength(answers.filter((r) => r.status === 201).length);
    for (const e of created) expect(e.seq!).toBeLessThan(frozeAt);
  });
});
