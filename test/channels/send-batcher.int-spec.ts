import { DataSource } from 'typeorm';
import { SendBatcher, SendOutcome, SendRequest } from '../../src/channels/writes';
import { CHANNEL_ORDER_LOCK_SEED } from '../../src/events/channel-order';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { group, history, sleep } from '../messages/helpers';

/**
 * Group commit of sends (SendBatcher, chat_send_messages) on PostgreSQL, where another transaction
 * can hold a channel's order lock while the batches run.
 */
describe('send batches (PostgreSQL)', () => {
  let t: TestApp;
  let db: DataSource;
  let ws: TestWorkspace;
  let ana: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '10000' });
    db = t.app.get(DataSource);
    ws = await newWorkspace(t);
    ana = (await ws.users('ana', 'bo'))[0]!;
  });
  afterAll(async () => t.close());

  it('sends to other channels while one channel is held by a long write, then that send too', async () => {
    const [busy, free] = [await group(ws, 'ana', ['bo']), await group(ws, 'ana', ['bo'])];
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, ${CHANNEL_ORDER_LOCK_SEED}))`, [
      busy.id,
    ]);
    let busyDone = false;
    const held = ana.api.post(`/v1/channels/${busy.id}/messages`, { content: 'waits' }).then((r) => {
      busyDone = true;
      return r;
    });
    try {
      await sleep(50);
      // one after the other, and several at once: each a batch while the held send waits
      for (let i = 0; i < 3; i++)
        expect(
          (await ana.api.post(`/v1/channels/${free.id}/messages`, { content: `free ${i}` })).status,
        ).toBe(201);
      const together = await Promise.all(
        [3, 4, 5, 6].map((i) => ana.api.post(`/v1/channels/${free.id}/messages`, { content: `free ${i}` })),
      );
      expect(together.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      expect(busyDone).toBe(false);
    } finally {
      await holder.commitTransaction();
      await holder.release();
    }
    expect((await held).status).toBe(201);
    expect((await history(ana.api, busy.id)).messages.map((m) => m.content)).toEqual(['waits']);
    const freeEvents: { seq: number }[] = await db.query(
      `SELECT seq FROM events WHERE channel_id = $1 AND type = 'message.created' ORDER BY seq`,
      [free.id],
    );
    const seqs = freeEvents.map((e) => Number(e.seq));
    expect(seqs).toHaveLength(7);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
  });

  const request = (channelId: string, content: string, parentId: string | null = null): SendRequest => ({
    workspaceId: ws.id,
    channelId,
    msg: {
      userId: ana.id,
      senderKey: ana.id,
      type: 'text',
      content,
      attachmentUrl: null,
      attachment: null,
      parentId,
      idempotencyKey: null,
      mentionIds: [],
      threadId: null,
      showInChannel: false,
      metadata: null,
      byUser: false,
      shadowed: false,
    },
    events: [],
    ids: [],
  });

  it('answers each send of a batch: a send the database refuses fails alone, the others are stored', async () => {
    const ch = await group(ws, 'ana', ['bo']);
    const batcher = t.app.get(SendBatcher);
    // in one tick: the first goes out alone, the rest wait and go as one batch, which the bad parent
    // (no such message: a foreign key violation) fails as a whole
    const sends: Promise<SendOutcome>[] = [
      batcher.send(request(ch.id, 'first')),
      batcher.send(request(ch.id, 'second')),
      batcher.send(request(ch.id, 'bad', '00000000-0000-7000-8000-00000000dead')),
      batcher.send(request(ch.id, 'third')),
    ];
    const settled = await Promise.allSettled(sends);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    expect(settled.filter((s) => s.status === 'fulfilled').map((s) => s.value.outcome)).toEqual([
      'sent',
      'sent',
      'sent',
    ]);
    const stored: { content: string }[] = await db.query(
      `SELECT content FROM messages WHERE channel_id = $1 ORDER BY created_at, id`,
      [ch.id],
    );
    expect(stored.map((m) => m.content)).toEqual(['first', 'second', 'third']);
  });

  it("stores a busy channel's sends in the order they came, across batches, while other channels go on", async () => {
    const [busy, free] = [await group(ws, 'ana', ['bo']), await group(ws, 'ana', ['bo'])];
    const batcher = t.app.get(SendBatcher);
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, ${CHANNEL_ORDER_LOCK_SEED}))`, [
      busy.id,
    ]);
    const held: Promise<SendOutcome>[] = [];
    try {
      // the first batch finds the channel busy; the rest come while it runs and in later batches
      held.push(batcher.send(request(busy.id, 'b1')), batcher.send(request(busy.id, 'b2')));
      await sleep(30);
      held.push(batcher.send(request(busy.id, 'b3')));
      expect(await batcher.send(request(free.id, 'f1'))).toMatchObject({ outcome: 'sent' });
      held.push(batcher.send(request(busy.id, 'b4')));
      expect(await batcher.send(request(free.id, 'f2'))).toMatchObject({ outcome: 'sent' });
    } finally {
      await holder.commitTransaction();
      await holder.release();
    }
    expect((await Promise.all(held)).map((o) => o.outcome)).toEqual(['sent', 'sent', 'sent', 'sent']);
    const stored: { content: string }[] = await db.query(
      `SELECT content FROM messages WHERE channel_id = $1 ORDER BY channel_no`,
      [busy.id],
    );
    expect(stored.map((m) => m.content)).toEqual(['b1', 'b2', 'b3', 'b4']);
  });
});
