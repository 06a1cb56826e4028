import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { history, Msg, Page, room, send, sleep } from './helpers';

/** Newest first by created_at desc, then id desc. */
function expectNewestFirst(list: Msg[]): void {
  for (let i = 1; i < list.length; i++) {
    const [a, b] = [list[i - 1]!, list[i]!];
    const ok =
      Date.parse(a.created_at) > Date.parse(b.created_at) || (a.created_at === b.created_at && a.id > b.id);
    expect(ok).toBe(true);
  }
}

describe('history (GET /v1/channels/:id/messages)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('pages 120 messages newest first (default 50) with opaque cursors, no duplicates or gaps', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const users = [ana, bo, cy];
    const sent: string[] = [];
    for (let i = 0; i < 120; i += 6) {
      const batch = await Promise.all(
        [0, 1, 2, 3, 4, 5].map((k) => send(users[(i + k) % 3]!, ch.id, `message ${i + k}`)),
      );
      sent.push(...batch.map((m) => m.id));
    }
    const first = await history(bo.api, ch.id);
    expect([first.messages.length, first.has_more]).toEqual([50, true]);
    const pages: Page[] = [];
    let before: string | undefined;
    do {
      const page = await history(bo.api, ch.id, before ? { limit: 50, before } : { limit: 50 });
      pages.push(page);
      before = page.next_cursor ?? undefined;
      expect(page.has_more).toBe(page.next_cursor !== null);
    } while (before);
    expect(pages.map((p) => p.messages.length)).toEqual([50, 50, 20]);
    const all = pages.flatMap((p) => p.messages);
    expect(new Set(all.map((m) => m.id)).size).toBe(120);
    expect([...all.map((m) => m.id)].sort()).toEqual([...sent].sort());
    expectNewestFirst(all);
    expect(all[0]!.id).toBe(first.messages[0]!.id);
    // the backend reads the same history
    expect((await history(ws.api, ch.id, { limit: 100 })).messages.map((m) => m.id)).toEqual(
      all.slice(0, 100).map((m) => m.id),
    );
  });

  it('after: a cursor or an RFC 3339 time answers newer messages oldest first, paging on with next_cursor', async () => {
    const { ch, ana } = await room(t);
    const msgs: Msg[] = [];
    for (let i = 0; i < 7; i++) msgs.push(await send(ana, ch.id, `m${i}`));
    const newest = await history(ana.api, ch.id, { limit: 3 }); // m6 m5 m4
    const older = await history(ana.api, ch.id, { limit: 3, before: newest.next_cursor! }); // m3 m2 m1
    expect(older.messages.map((m) => m.content)).toEqual(['m3', 'm2', 'm1']);
    // catch up from the oldest of that page: m2.. (after m1's cursor is not exposed; use the page cursor)
    const caught = await history(ana.api, ch.id, { limit: 2, after: older.next_cursor! });
    expect(caught.messages.map((m) => m.content)).toEqual(['m2', 'm3']);
    expect(caught.has_more).toBe(true);
    const rest = await history(ana.api, ch.id, { limit: 10, after: caught.next_cursor! });
    expect(rest.messages.map((m) => m.content)).toEqual(['m4', 'm5', 'm6']);
    expect([rest.has_more, rest.next_cursor]).toEqual([false, null]);
    // a time means later than the time as shown (CONTRACT §21): the message that prints as it is left out
    const since = await history(ana.api, ch.id, { after: msgs[4]!.created_at });
    expect(since.messages.map((m) => m.content)).toEqual(['m5', 'm6']);
    const iso = new Date(Date.parse(msgs[0]!.created_at) - 1).toISOString().replace('Z', '+00:00');
    expect((await history(ana.api, ch.id, { after: iso })).messages).toHaveLength(7);
  });

  it('after=<time> is later than the time as shown, at millisecond precision, whatever the stored microseconds (§21)', async () => {
    const { ch, ana } = await room(t);
    const [a, b, c, d] = [
      await send(ana, ch.id, 'a'),
      await send(ana, ch.id, 'b'),
      await send(ana, ch.id, 'c'),
      await send(ana, ch.id, 'd'),
    ];
    // three messages in one millisecond and one in the next: created_at keeps microseconds, the API prints milliseconds
    const ms = Math.floor(Date.now() / 1000) * 1000 + 60_000 + 7;
    const at = (micros: number) =>
      new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
    const db = t.app.get(DataSource);
    for (const [m, micros] of [
      [a, 0],
      [b, 400],
      [c, 999],
    ] as const)
      await db.query(`UPDATE messages SET created_at = $2::timestamptz WHERE id = $1`, [m.id, at(micros)]);
    await db.query(
      `UPDATE messages SET created_at = $2::timestamptz + interval '1 millisecond' WHERE id = $1`,
      [d.id, at(0)],
    );
    const shown = new Date(ms).toISOString();
    expect(
      (await history(ana.api, ch.id)).messages.filter((m) => m.id !== d.id).map((m) => m.created_at),
    ).toEqual([shown, shown, shown]);

    const after = async (q: string) =>
      (await history(ana.api, ch.id, { after: q })).messages.map((m) => m.content);
    expect(await after(shown)).toEqual(['d']);
    expect(await after(shown.replace('Z', '+00:00'))).toEqual(['d']);
    expect(await after(at(500))).toEqual(['d']); // finer than a millisecond: compared as shown, cut to it
    expect(await after(new Date(ms - 1).toISOString())).toEqual(['a', 'b', 'c', 'd']);
    // a time with second precision: the messages printed within that second are later than it
    const second = new Date(ms - 7).toISOString().replace('.000Z', 'Z');
    expect(await after(second)).toEqual(['a', 'b', 'c', 'd']);
    // paging on with next_cursor from a time still reaches every message
    const first = await history(ana.api, ch.id, { after: new Date(ms - 1).toISOString(), limit: 2 });
    expect(first.messages.map((m) => m.content)).toEqual(['a', 'b']);
    const next = await history(ana.api, ch.id, { after: first.next_cursor!, limit: 5 });
    expect(next.messages.map((m) => m.content)).toEqual(['c', 'd']);
  });

  it('limit must be 1..100; a bad cursor or time is 400; before and after together are 400', async () => {
    const { ch, ana } = await room(t);
    await send(ana, ch.id, 'one');
    const base = `/v1/channels/${ch.id}/messages`;
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=many',
      'before=garbage',
      'after=garbage',
      'after=2026-13-45T99:00:00Z',
      'after=2026-02-31T00:00:00Z',
      'after=0000-01-01T00:00:00Z',
      `before=${Buffer.from('["x","y"]').toString('base64url')}`,
    ]) {
      expectError(await ana.api.get(`${base}?${q}`), 400, 'VALIDATION_ERROR');
    }
    const page = await history(ana.api, ch.id, { limit: 1 });
    expect(page.has_more).toBe(false);
    const cursor = Buffer.from(
      JSON.stringify(['2026-01-01T00:00:00.000000Z', '01900000-0000-7000-8000-000000000001']),
    ).toString('base64url');
    expectError(await ana.api.get(`${base}?before=${cursor}&after=${cursor}`), 400, 'VALIDATION_ERROR');
    expect((await ana.api.get(`${base}?limit=100`)).status).toBe(200);
  });

  it('a non-member reading history is 403 NOT_A_MEMBER, with nothing of the channel in the body', async () => {
    const { ws, ch, ana } = await room(t);
    await send(ana, ch.id, 'members only');
    const dan = await ws.user('dan');
    const res = await dan.api.get(`/v1/channels/${ch.id}/messages`);
    expectError(res, 403, 'NOT_A_MEMBER');
    expect(res.text).not.toContain('members only');
    expectError(await ana.api.get('/v1/channels/nope/messages'), 404, 'NOT_FOUND');
  });

  it('a channel named by its external id reads the same; an id wins over another channel whose external id is that id', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const m = await send(ana, ch.id, 'by either name');
    expect((await history(bo.api, ch.external_id)).messages.map((x) => x.id)).toEqual([m.id]);
    // a second channel, of ana alone, whose external id is the first channel's id
    const twin = await ws.api.post('/v1/channels', { type: 'group', external_id: ch.id, created_by: 'ana' });
    expect(twin.status).toBe(201);
    await send(ana, twin.body.id, 'in the twin');
    // ch.id names the first channel: its history, for a member of it and for the backend
    expect((await history(bo.api, ch.id)).messages.map((x) => x.id)).toEqual([m.id]);
    expect((await history(ws.api, ch.id)).messages.map((x) => x.id)).toEqual([m.id]);
    // dan is a member of the twin only: ch.id still names the first channel, which he may not read
    const dan = await ws.user('dan');
    expect(
      (await ws.api.post(`/v1/channels/${twin.body.id}/members`, { member_external_ids: ['dan'] })).status,
    ).toBeLessThan(300);
    const res = await dan.api.get(`/v1/channels/${ch.id}/messages`);
    expectError(res, 403, 'NOT_A_MEMBER');
    expect(res.text).not.toContain('by either name');
    expect(res.text).not.toContain('in the twin');
  });

  it('receipt_status: sent → delivered → read once every other member has delivered / read', async () => {
    const { ch, ana, bo, cy } = await room(t);
    const m = await send(ana, ch.id, 'status?');
    const status = async () =>
      (await history(ana.api, ch.id)).messages.find((x) => x.id === m.id)!.receipt_status;
    expect(m.receipt_status).toBe('sent');
    expect((await bo.api.post(`/v1/channels/${ch.id}/delivered`)).status).toBeLessThan(300);
    expect(await status()).toBe('sent');
    expect((await cy.api.post(`/v1/channels/${ch.id}/delivered`)).status).toBeLessThan(300);
    expect(await status()).toBe('delivered');
    expect((await bo.api.post(`/v1/channels/${ch.id}/read`)).status).toBeLessThan(300);
    expect(await status()).toBe('delivered');
    expect((await cy.api.post(`/v1/channels/${ch.id}/read`)).status).toBeLessThan(300);
    expect(await status()).toBe('read');
    // relative to the author: bo's own later message is not read by ana yet
    await sleep(2);
    const mine = await send(bo, ch.id, 'from bo');
    expect(mine.receipt_status).toBe('sent');
  });

  it('with read receipts off, messages stop at delivered', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    expect((await ws.api.patch('/v1/workspace/settings', { read_receipts_enabled: false })).status).toBe(200);
    const m = await send(ana, ch.id, 'no ticks');
    for (const u of [bo, cy])
      expect((await u.api.post(`/v1/channels/${ch.id}/read`)).status).toBeLessThan(300);
    expect((await history(ana.api, ch.id)).messages.find((x) => x.id === m.id)!.receipt_status).toBe(
      'delivered',
    );
  });

  it('a channel with no other member keeps its messages at sent', async () => {
    const { ws, ana } = await room(t);
    const solo = await ws.api.post('/v1/channels', { type: 'group', external_id: 'solo', created_by: 'ana' });
    await sleep(2);
    const m = await send(ana, solo.body.id, 'alone');
    expect(m.receipt_status).toBe('sent');
  });
});
