import { DataSource } from 'typeorm';
import { EventLogReader } from '../../src/events/event-log.reader';
import { ChannelWrites } from '../../src/channels/writes';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';

describe('sync never skips an event committed late (PostgreSQL, concurrent transactions)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('the settled bound stops at the oldest writer of this database and is never below the next id otherwise', async () => {
    const reader = t.app.get(EventLogReader);
    const db = t.app.get(DataSource);
    const before = BigInt(await reader.bound());
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const [{ xid }] = await runner.query(`SELECT pg_current_xact_id()::text AS xid`);
    // transactions that start after the writer do not move the bound past it
    for (let i = 0; i < 3; i++) await db.query(`SELECT pg_current_xact_id()`);
    expect(await reader.bound()).toBe(xid);
    await runner.commitTransaction();
    await runner.release();
    const after = BigInt(await reader.bound());
    expect(after > BigInt(xid)).toBe(true);
    expect(after >= before).toBe(true);
  });

  it('holds the cursor behind a transaction in flight, then returns both events in order', async () => {
    const ws = await newWorkspace(t);
    const [ana, bo] = await ws.users('ana', 'bo');
    const ch = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'late',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const cursor = (await bo!.api.get('/v1/me/sync')).body.next_cursor;

    // a transaction that writes an event and stays open
    const runner = t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const [session] = await t.app.get(ChannelWrites).lock(runner.manager, ws.id, [ch.id]);
    await session!.append('channel.updated', { channel: ch });
    // meanwhile other transactions commit messages (they wait for the channel row lock, so use another channel)
    const other = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'other',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
    const later = (await ana!.api.post(`/v1/channels/${other.id}/messages`, { content: 'committed first' }))
      .body;

    const during = (await bo!.api.get(`/v1/me/sync?since=${cursor}`)).body;
    expect(JSON.stringify(during.events)).not.toContain(later.id);

    await runner.commitTransaction();
    await runner.release();
    const after = (await bo!.api.get(`/v1/me/sync?since=${during.next_cursor}`)).body;
    const types = after.events.map((e: { type: string }) => e.type);
    expect(types).toContain('channel.updated');
    expect(JSON.stringify(after.events)).toContain(later.id);
    // nothing twice across the two pages
    const ids = [...during.events, ...after.events].map(
      (e: { type: string; seq?: number; channel_id?: string }) => `${e.channel_id}:${e.seq}`,
    );
    expect(new Set(ids).size).toBe(ids.length);
  });
});
