import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';

describe('direct channels under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('20 parallel creates of one pair, in both orders, yield one channel', async () => {
    const ws = await newWorkspace(t);
    await ws.users('ana', 'bo');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ws.api.post('/v1/channels', {
          type: 'direct',
          member_external_ids: i % 2 ? ['ana', 'bo'] : ['bo', 'ana'],
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const list = await ws.api.get('/v1/channels?type=direct');
    expect(list.body.channels).toHaveLength(1);
  });
});
