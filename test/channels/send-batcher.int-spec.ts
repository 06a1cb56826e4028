import { randomUUID } from 'crypto';
import { DataSource } from 'typeorm';
import {
  PENDING_MESSAGE_ID,
  SendBatcher,
  sendMessage,
  sendMessages,
  SendOutcome,
  SendRequest,
} from '../../src/channels/writes';
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
  let bo: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '10000' });
    db = t.app.get(DataSource);
    ws = await newWorkspace(t);
    const users = await ws.users('ana', 'bo');
    ana = users[0]!;
    bo = users[1]!;
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
      id: null,
      keepDraft: false,
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

  /** A send as the messages service builds it: a message.created whose id and instant the database sets. */
  const plain = (
    channelId: string,
    user: TestUser | null,
    content: string,
    more: Partial<SendRequest['msg']> = {},
  ): SendRequest => ({
    workspaceId: ws.id,
    channelId,
    msg: {
      id: null,
      keepDraft: false,
      userId: user?.id ?? null,
      senderKey: user?.id ?? 'system',
      type: user ? 'text' : 'system',
      content,
      attachmentUrl: null,
      attachment: null,
      parentId: null,
      idempotencyKey: null,
      mentionIds: [],
      threadId: null,
      showInChannel: false,
      metadata: more.metadata ?? null,
      byUser: !!user,
      shadowed: false,
      ...more,
    },
    events: [
      {
        type: 'message.created',
        payload: {
          message: {
            id: PENDING_MESSAGE_ID,
            channel_id: channelId,
            channel_external_id: 'x',
            user: null,
            content,
            type: user ? 'text' : 'system',
            attachment_url: null,
            created_at: '',
            metadata: {},
            previews: [],
          },
        },
      },
    ],
    ids: [randomUUID()],
  });

  /** Everything a send leaves in the database, without the ids and instants it made. */
  async function stateOf(channels: string[]) {
    const pos = (id: string) => channels.indexOf(id);
    const messages: Record<string, unknown>[] = await db.query(
      `SELECT channel_id, user_id, sender_key, type, content, idempotency_key, channel_no, sender_no, thread_id,
              show_in_channel, metadata, shadowed, deleted_at
         FROM messages WHERE channel_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [channels],
    );
    const events: {
      channel_id: string;
      seq: string;
      type: string;
      payload: { message?: Record<string, unknown> };
      message_created_at: Date;
      message_id: string;
    }[] = await db.query(
      `SELECT e.channel_id, e.seq, e.type, e.payload, m.created_at AS message_created_at, m.id AS message_id
           FROM events e LEFT JOIN messages m ON m.id = (e.payload->'message'->>'id')::uuid
          WHERE e.channel_id = ANY($1::uuid[]) ORDER BY e.position`,
      [channels],
    );
    const counters: Record<string, unknown>[] = await db.query(
      `SELECT c.id, c.last_seq, c.message_count, c.last_message_at = (SELECT max(created_at) FROM messages m
                WHERE m.channel_id = c.id) AS last_message_at_is_latest
         FROM channels c WHERE c.id = ANY($1::uuid[]) ORDER BY c.id`,
      [channels],
    );
    const members: Record<string, unknown>[] = await db.query(
      // the message whose instant last_sent_at is (a user's own last send; a backend send leaves it)
      `SELECT cm.channel_id, cm.user_id, cm.sent_count,
              (SELECT m.content FROM messages m WHERE m.channel_id = cm.channel_id AND m.created_at = cm.last_sent_at) AS last_sent
         FROM channel_members cm WHERE cm.channel_id = ANY($1::uuid[]) ORDER BY cm.user_id`,
      [channels],
    );
    // each event names its message by id and instant; a channel's seqs rise with (created_at, id)
    for (const e of events.filter((x) => x.type === 'message.created')) {
      expect(e.message_id).toBe(e.payload.message!.id);
      expect(e.payload.message!.created_at).toBe(new Date(e.message_created_at).toISOString());
    }
    return {
      // the keys differ by run (a key is the workspace's): whether there is one
      messages: messages.map((m) => ({
        ...m,
        channel_id: pos(m.channel_id as string),
        idempotency_key: m.idempotency_key !== null,
      })),
      events: events.map((e) => ({
        channel: pos(e.channel_id),
        seq: Number(e.seq),
        type: e.type,
        content: e.payload.message?.content,
      })),
      counters: counters
        .map((c) => ({ ...c, id: undefined }))
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      members: members
        .map((m) => ({ ...m, channel_id: pos(m.channel_id as string) }))
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    };
  }

  /** How often the batch statement fell back to chat_send_message (one call per send it did not store set-based). */
  async function batchOnce(batch: SendRequest[]): Promise<{ answers: unknown[]; singly: number }> {
    const qr = db.createQueryRunner();
    await qr.connect();
    // the backend's count of calls not yet reported: it can still hold an earlier transaction's, so the
    // batch's are the difference (nothing is reported while a transaction is open)
    const calls = async () => {
      const [row] = (await qr.query(
        // every overload (the one without a traceparent stays for the previous release)
        `SELECT coalesce(sum(pg_stat_get_xact_function_calls(p.oid)), 0)::int AS calls FROM pg_proc p
          WHERE p.proname = 'chat_send_message' AND p.pronamespace = current_schema()::regnamespace`,
      )) as { calls: number }[];
      return row!.calls;
    };
    try {
      await qr.startTransaction();
      await qr.query(`SET LOCAL track_functions = 'pl'`);
      const before = await calls();
      const answers = await sendMessages(qr.manager, batch);
      const singly = (await calls()) - before;
      await qr.commitTransaction();
      return { answers, singly };
    } finally {
      await qr.release();
    }
  }

  it('stores a batch of plain sends set-based exactly as one send at a time would', async () => {
    const plan = (a: string, b: string): SendRequest[] => [
      plain(a, ana, 'one'),
      plain(b, bo, 'two'),
      plain(a, bo, 'three', { metadata: { k: 'v' } }),
      plain(a, ana, 'four', { idempotencyKey: `key-${a}` }),
      plain(b, null, 'a notice'),
      plain(b, bo, 'five', { byUser: false }),
      plain(a, ana, 'six'),
    ];
    const batched = [(await group(ws, 'ana', ['bo'])).id, (await group(ws, 'ana', ['bo'])).id];
    const single = [(await group(ws, 'ana', ['bo'])).id, (await group(ws, 'ana', ['bo'])).id];
    const { answers, singly } = await batchOnce(plan(batched[0]!, batched[1]!));
    expect(singly).toBe(0); // every send of the batch went set-based
    expect(answers.map((a) => (a as SendOutcome).outcome)).toEqual(Array(7).fill('sent'));
    for (const r of plan(single[0]!, single[1]!))
      expect((await sendMessage(db.manager, r)).outcome).toBe('sent');
    const [got, want] = [await stateOf(batched), await stateOf(single)];
    expect(got).toEqual(want);
    expect(
      got.events.filter((e) => e.channel === 0 && e.type === 'message.created').map((e) => e.content),
    ).toEqual(['one', 'three', 'four', 'six']);
    // each answer is its own message's: id, instant and seq as stored
    for (const a of answers as Extract<SendOutcome, { outcome: 'sent' }>[]) {
      const [row] = await db.query<{ seq: string }[]>(
        `SELECT e.seq FROM events e WHERE (e.payload->'message'->>'id')::uuid = $1 AND e.payload->'message'->>'created_at' = $2`,
        [a.id, a.created_at],
      );
      expect(Number(row?.seq)).toBe(a.first_seq);
    }
  });

  it("a set-based batch deletes each sender's channel draft, as one send at a time does, and tells only them", async () => {
    const [a, b] = [(await group(ws, 'ana', ['bo'])).id, (await group(ws, 'ana', ['bo'])).id];
    const save = (channel: string, u: TestUser, content: string, thread: string | null = null) =>
      db.query(
        `INSERT INTO drafts (id, workspace_id, channel_id, user_id, thread_id, content, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, now(), now())`,
        [ws.id, channel, u.id, thread, content],
      );
    const root = await sendMessage(db.manager, plain(a, bo, 'a root'));
    if (root.outcome !== 'sent') throw new Error('setup');
    await save(a, ana, 'ana in a');
    await save(a, bo, 'bo in a');
    await save(b, ana, 'ana in b (she sends nothing there)');
    await save(a, bo, 'bo in the thread', root.id);
    const { singly } = await batchOnce([plain(a, ana, 'one'), plain(a, bo, 'two'), plain(b, bo, 'three')]);
    expect(singly).toBe(0);
    const left = await db.query<{ content: string }[]>(
      `SELECT content FROM drafts WHERE channel_id = ANY($1::uuid[]) ORDER BY content`,
      [[a, b]],
    );
    expect(left.map((d) => d.content)).toEqual(['ana in b (she sends nothing there)', 'bo in the thread']);
    const told = await db.query<{ payload: { channel_id: string; thread_id: null }; audience: string[] }[]>(
      `SELECT payload, audience FROM events WHERE type = 'draft.deleted' AND payload->>'channel_id' = ANY($1::text[])`,
      [[a, b]],
    );
    expect(
      told.map((e) => `${e.payload.channel_id} ${e.payload.thread_id} ${e.audience.join(',')}`).sort(),
    ).toEqual([`${a} null ${ana.id}`, `${a} null ${bo.id}`].sort());
  });

  it('sends a channel with a send that is not plain one by one, in order, and answers refusals and replays there', async () => {
    const [mixed, plainCh, replayCh] = [
      (await group(ws, 'ana', ['bo'])).id,
      (await group(ws, 'ana', ['bo'])).id,
      (await group(ws, 'ana', ['bo'])).id,
    ];
    const root = await sendMessage(db.manager, plain(mixed, ana, 'root'));
    const first = await sendMessage(db.manager, plain(replayCh, ana, 'keyed', { idempotencyKey: 'again' }));
    const outsider = (await ws.users('cy'))[0]!;
    const { answers, singly } = await batchOnce([
      plain(mixed, ana, 'before the reply'),
      plain(plainCh, ana, 'elsewhere'),
      plain(mixed, bo, 'a reply', { threadId: (root as { id: string }).id }),
      plain(mixed, ana, 'after the reply'),
      plain(replayCh, ana, 'keyed', { idempotencyKey: 'again' }),
      plain(plainCh, outsider, 'not a member'),
    ]);
    // the mixed channel's three sends and the replay channel's one; plainCh has a refusal, so both its sends
    expect(singly).toBe(6);
    expect(answers.map((a) => (a as SendOutcome).outcome)).toEqual([
      'sent',
      'sent',
      'sent',
      'sent',
      'replay',
      'not_member',
    ]);
    expect(answers[4]).toMatchObject({ id: (first as { id: string }).id });
    const order: { content: string }[] = await db.query(
      `SELECT m.content FROM events e JOIN messages m ON m.id = (e.payload->'message'->>'id')::uuid
        WHERE e.channel_id = $1 AND e.type = 'message.created' ORDER BY e.seq`,
      [mixed],
    );
    expect(order.map((o) => o.content)).toEqual(['root', 'before the reply', 'a reply', 'after the reply']);
  });

  it("refuses a user's sends in a frozen channel and the second in slow mode, in the batch's order, and lets the backend's through", async () => {
    const [frozen, slow] = [(await group(ws, 'ana', ['bo'])).id, (await group(ws, 'ana', ['bo'])).id];
    expect((await ws.api.patch(`/v1/channels/${frozen}`, { frozen: true })).status).toBe(200);
    expect((await ws.api.patch(`/v1/channels/${slow}`, { slow_mode_seconds: 60 })).status).toBe(200);
    const { answers, singly } = await batchOnce([
      plain(frozen, bo, 'refused'),
      plain(slow, bo, 'first'),
      plain(frozen, bo, 'from the backend', { byUser: false }),
      plain(slow, bo, 'too soon'),
    ]);
    expect(singly).toBe(4); // neither channel is plain for a user's own send
    expect(answers.map((a) => (a as SendOutcome).outcome)).toEqual(['frozen', 'sent', 'sent', 'slow_mode']);
    const stored = await db.query<{ content: string }[]>(
      `SELECT content FROM messages WHERE channel_id = ANY($1::uuid[]) ORDER BY created_at`,
      [[frozen, slow]],
    );
    expect(stored.map((m) => m.content)).toEqual(['first', 'from the backend']);
  });

  it('a key used twice in one batch is stored once and answered as a replay the second time', async () => {
    const ch = (await group(ws, 'ana', ['bo'])).id;
    const { answers } = await batchOnce([
      plain(ch, ana, 'twice', { idempotencyKey: 'twice' }),
      plain(ch, ana, 'twice', { idempotencyKey: 'twice' }),
    ]);
    const [a, b] = answers as { outcome: string; id: string }[];
    expect([a!.outcome, b!.outcome]).toEqual(['sent', 'replay']);
    expect(b!.id).toBe(a!.id);
    expect(
      (
        await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM messages WHERE channel_id = $1`, [ch])
      )[0]!.n,
    ).toBe(1);
  });
});
