import { DataSource } from 'typeorm';
import { group } from '../messages/helpers';
import { PollClosing } from '../../src/polls/poll-closing';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket } from '../support/socket';
import { createWebhook, eventOf } from '../webhooks/helpers';

interface Poll {
  id: string;
  options: { id: string; text: string; vote_count: number }[];
  total_votes: number;
  voter_count: number;
  closed: boolean;
  closed_at: string | null;
  my_votes?: string[];
}
interface PollMessage {
  id: string;
  type: string;
  content: string;
  poll: Poll | null;
}

/** CONTRACT §28's polls: on the embedded database and on PostgreSQL. */
describe('polls', () => {
  let t: TestApp;
  let rx: Receiver;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser, cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
    await rx.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo, cy] = (await ws.users('ana', 'bo', 'cy')) as [TestUser, TestUser, TestUser];
    ch = await group(ws, 'ana', ['bo', 'cy']);
  });
  afterEach(() => closeAllSockets());

  const create = async (u: TestUser | TestWorkspace, body: Record<string, unknown>) => {
    const res = await u.api.post(`/v1/channels/${ch.id}/polls`, body);
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return res.body as PollMessage;
  };
  const vote = (u: TestUser, m: PollMessage, ids: string[]) =>
    u.api.put(`/v1/messages/${m.id}/poll/vote`, { option_ids: ids });
  const counts = (p: Poll | null | undefined) => p?.options.map((o) => o.vote_count);
  const inHistory = async (who: TestUser | TestWorkspace, id: string) =>
    ((await who.api.get(`/v1/channels/${ch.id}/messages`)).body.messages as PollMessage[]).find(
      (m) => m.id === id,
    )!;

  it('replaces votes with exact counts, answers my_votes to users only, and broadcasts counts with a seq but no my_votes', async () => {
    const hook = rx.url(200, 'polls');
    await createWebhook(ws, hook, ['poll.voted', 'poll.closed', 'message.updated', 'message.created']);
    const sa = await connectSocket(t.baseUrl, ana.token);
    const m = await create(ana, {
      question: 'Lunch?',
      options: ['Pizza', ' Sushi ', 'Salad'],
      multiple_choice: true,
    });
    expect([m.type, m.content, m.poll!.options.map((o) => o.text), m.poll!.my_votes]).toEqual([
      'poll',
      'Lunch?',
      ['Pizza', 'Sushi', 'Salad'],
      [],
    ]);
    const [pizza, sushi, salad] = m.poll!.options.map((o) => o.id) as [string, string, string];

    const b1 = await vote(bo, m, [pizza, salad]);
    expect([b1.status, counts(b1.body.poll), b1.body.poll.my_votes]).toEqual([
      200,
      [1, 0, 1],
      [pizza, salad],
    ]);
    const c1 = await vote(cy, m, [pizza]);
    expect([counts(c1.body.poll), c1.body.poll.total_votes, c1.body.poll.voter_count]).toEqual([
      [2, 0, 1],
      3,
      2,
    ]);
    const b2 = await vote(bo, m, [sushi]); // replaces pizza and salad
    expect([counts(b2.body.poll), b2.body.poll.total_votes, b2.body.poll.voter_count]).toEqual([
      [1, 1, 0],
      2,
      2,
    ]);
    const same = await vote(bo, m, [sushi]); // the same again: nothing changes, nothing fires
    expect(counts(same.body.poll)).toEqual([1, 1, 0]);
    const gone = await bo.api.delete(`/v1/messages/${m.id}/poll/vote`);
    expect([counts(gone.body.poll), gone.body.poll.voter_count, gone.body.poll.my_votes]).toEqual([
      [1, 0, 0],
      1,
      [],
    ]);

    // the backend sees the counts, and [] for my_votes
    expect((await inHistory(ws, m.id)).poll!.my_votes).toEqual([]);
    expect((await inHistory(cy, m.id)).poll!.my_votes).toEqual([pizza]);

    // three changes (bo, cy, bo; the repeat and nothing else), then the withdrawal: four broadcasts
    const closed = await ana.api.post(`/v1/messages/${m.id}/poll/close`);
    expect([closed.status, closed.body.poll.closed]).toEqual([200, true]);
    const updates = async () => {
      await sa.waitFor('message.updated', (e) => e.data.id === m.id && e.data.poll?.closed === true);
      return sa.events
        .filter((e) => e.name === 'message.updated' && e.payload.data.id === m.id)
        .map((e) => e.payload);
    };
    const got = await updates();
    expect(got.map((e) => [counts(e.data.poll), e.data.poll.closed, 'my_votes' in e.data.poll])).toEqual([
      [[1, 0, 1], false, false],
      [[2, 0, 1], false, false],
      [[1, 1, 0], false, false],
      [[1, 0, 0], false, false],
      [[1, 0, 0], true, false],
    ]);
    expect(got.every((e, i) => i === 0 || e.seq === got[i - 1].seq + 1)).toBe(true);

    // webhooks: a poll.voted per change (the voter, their options after it) and the poll.closed, never
    // message.updated for counts (judged over everything delivered once these five arrived)
    const delivered = await rx.waitFor(hook, {
      count: 5,
      pred: (r) => eventOf(r)?.startsWith('poll.') === true,
    });
    const shown = (r: (typeof delivered)[number]) =>
      JSON.stringify([
        eventOf(r),
        r.json.data.user?.external_id ?? null,
        r.json.data.option_ids ?? null,
        counts(r.json.data.poll),
      ]);
    expect(delivered.map(shown).sort()).toEqual(
      [
        ['poll.voted', 'bo', [pizza, salad], [1, 0, 1]],
        ['poll.voted', 'cy', [pizza], [2, 0, 1]],
        ['poll.voted', 'bo', [sushi], [1, 1, 0]],
        ['poll.voted', 'bo', [], [1, 0, 0]],
        ['poll.closed', null, null, [1, 0, 0]],
      ]
        .map((x) => JSON.stringify(x))
        .sort(),
    );
    expect(
      rx
        .received(hook)
        .map(eventOf)
        .filter((e) => e === 'message.updated'),
    ).toEqual([]);
  });

  it('closes at closes_at by the scheduler, once, and then refuses votes', async () => {
    const at = new Date(Date.now() + 1500).toISOString();
    const m = await create(bo, { question: 'Timed?', options: ['yes', 'no'], closes_at: at });
    expect(m.poll).toMatchObject({ closed: false });
    expect((await vote(cy, m, [m.poll!.options[0]!.id])).status).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(at) - Date.now() + 50));
    // due now: however many passes run, it closes once
    const closing = t.app.get(PollClosing);
    const fired = await Promise.all([closing.fireDue(10), closing.fireDue(10), closing.fireDue(10)]);
    const total = fired.reduce((a, b) => a + b, 0);
    const after = await inHistory(bo, m.id);
    expect([after.poll!.closed, after.poll!.closed_at]).toEqual([true, at]);
    const db = t.app.get(DataSource);
    const closes = await db.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'poll.closed' AND payload->>'message_id' = $1`,
      [m.id],
    );
    expect([total <= 1, closes[0].n]).toEqual([true, 1]);
    const late = await vote(cy, m, [m.poll!.options[1]!.id]);
    expect([late.status, late.body.error.code]).toEqual([409, 'POLL_CLOSED']);
  });

  it('refuses what a poll cannot take, and an unsent poll is blank with its votes gone', async () => {
    const m = await create(ana, { question: 'Keep?', options: ['a', 'b'] });
    const [a, b] = m.poll!.options.map((o) => o.id) as [string, string];
    for (const [body, what] of [
      [{ option_ids: [a, b] }, 'two options in a single-choice poll'],
      [{ option_ids: ['0190d5a8-0000-7000-8000-000000000000'] }, 'an option it does not have'],
      [{ option_ids: [] }, 'no option'],
    ] as const) {
      const res = await bo.api.put(`/v1/messages/${m.id}/poll/vote`, body);
      expect([what, res.status, res.body.error.code]).toEqual([what, 400, 'VALIDATION_ERROR']);
    }
    const text = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'not a poll' })).body;
    const notPoll = await bo.api.put(`/v1/messages/${text.id}/poll/vote`, { option_ids: [a] });
    expect([notPoll.status, notPoll.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const byOther = await cy.api.post(`/v1/messages/${m.id}/poll/close`);
    expect([byOther.status, byOther.body.error.code]).toEqual([403, 'FORBIDDEN']);
    // the question stays; the metadata may change
    const edit = await ana.api.patch(`/v1/messages/${m.id}`, { content: 'Other?' });
    expect([edit.status, edit.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const meta = await ana.api.patch(`/v1/messages/${m.id}`, { metadata: { topic: 'x' } });
    expect([meta.status, meta.body.content, meta.body.metadata]).toEqual([200, 'Keep?', { topic: 'x' }]);

    expect((await vote(bo, m, [a])).status).toBe(200);
    const unsent = await ana.api.delete(`/v1/messages/${m.id}`);
    expect([unsent.status, unsent.body.content, unsent.body.poll]).toEqual([200, '', null]);
    const late = await vote(bo, m, [b]);
    expect([late.status, late.body.error.code]).toEqual([422, 'MESSAGE_DELETED']);
    const db = t.app.get(DataSource);
    expect(
      await db.query(
        `SELECT v.* FROM poll_votes v JOIN polls p ON p.id = v.poll_id WHERE p.message_id = $1`,
        [m.id],
      ),
    ).toEqual([]);
  });

  it("withdraws an erased user's votes: the counts drop and the voters list forgets them", async () => {
    const m = await create(ana, { question: 'Stay?', options: ['x', 'y'], multiple_choice: true });
    const [x, y] = m.poll!.options.map((o) => o.id) as [string, string];
    expect((await vote(bo, m, [x, y])).status).toBe(200);
    expect((await vote(cy, m, [x])).status).toBe(200);
    expect((await ws.api.delete('/v1/users/bo?messages=keep')).status).toBe(204);
    const after = (await inHistory(ana, m.id)).poll!;
    expect([counts(after), after.total_votes, after.voter_count]).toEqual([[1, 0], 1, 1]);
    const listed = await ana.api.get(`/v1/messages/${m.id}/poll/votes`);
    expect(listed.body.votes.map((v: { user: { external_id: string } }) => v.user.external_id)).toEqual([
      'cy',
    ]);
  });

  it('lists voters newest first in pages, never those of an anonymous poll', async () => {
    const m = await create(ana, { question: 'Who?', options: ['x', 'y'] });
    const [x, y] = m.poll!.options.map((o) => o.id) as [string, string];
    for (const [u, o] of [
      [bo, x],
      [cy, x],
      [ana, y],
    ] as const)
      expect((await vote(u, m, [o])).status).toBe(200);
    const first = await bo.api.get(`/v1/messages/${m.id}/poll/votes?limit=2`);
    expect([
      first.body.votes.map((v: { user: { external_id: string } }) => v.user.external_id),
      first.body.has_more,
    ]).toEqual([['ana', 'cy'], true]);
    const rest = await bo.api.get(`/v1/messages/${m.id}/poll/votes?limit=2&before=${first.body.next_cursor}`);
    expect([
      rest.body.votes.map((v: { user: { external_id: string } }) => v.user.external_id),
      rest.body.has_more,
    ]).toEqual([['bo'], false]);
    const onlyX = await ws.api.get(`/v1/messages/${m.id}/poll/votes?option_id=${x}`);
    expect(onlyX.body.votes.map((v: { user: { external_id: string } }) => v.user.external_id)).toEqual([
      'cy',
      'bo',
    ]);

    const anon = await create(bo, { question: 'Secret?', options: ['x', 'y'], anonymous: true });
    for (const who of [bo, ws] as const) {
      const res = await who.api.get(`/v1/messages/${anon.id}/poll/votes`);
      expect([res.status, res.body.error.code]).toEqual([403, 'POLL_ANONYMOUS']);
    }
  });
});
