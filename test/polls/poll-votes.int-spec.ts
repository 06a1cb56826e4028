import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser } from '../support/fixtures';

/**
 * CONTRACT §28: counts stay exact when votes really run at once on PostgreSQL: 50 users vote together,
 * then 25 change their vote and 10 withdraw theirs together, and every counter equals what the vote
 * rows say and what was asked.
 */
describe('poll votes racing (PostgreSQL)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('50 concurrent votes, then 25 changes and 10 withdrawals at once, leave exact counts', async () => {
    const ws = await newWorkspace(t);
    const names = Array.from({ length: 50 }, (_, i) => `v${String(i).padStart(2, '0')}`);
    const [owner, ...voters] = (await ws.users('owner', ...names)) as [TestUser, ...TestUser[]];
    const ch = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `race-${Date.now()}`,
      name: 'Race',
      created_by: 'owner',
      member_external_ids: names,
    });
    expect(ch.status).toBe(201);
    const created = await owner.api.post(`/v1/channels/${ch.body.id}/polls`, {
      question: 'Race?',
      options: ['A', 'B', 'C', 'D'],
      multiple_choice: true,
    });
    const m = created.body as { id: string; poll: { id: string; options: { id: string }[] } };
    const [a, b, c, d] = m.poll.options.map((o) => o.id) as [string, string, string, string];
    const vote = (u: TestUser, ids: string[]) =>
      u.api.put(`/v1/messages/${m.id}/poll/vote`, { option_ids: ids });

    // everyone votes A, and every second voter B too
    const first = await Promise.all(voters.map((u, i) => vote(u, i % 2 ? [a] : [a, b])));
    expect(first.map((r) => r.status)).toEqual(Array(50).fill(200));
    // then at once: 25 change to C and D, 10 withdraw, the rest vote the same again
    const second = await Promise.all(
      voters.map((u, i) =>
        i < 25
          ? vote(u, [c, d])
          : i < 35
            ? u.api.delete(`/v1/messages/${m.id}/poll/vote`)
            : vote(u, i % 2 ? [a] : [a, b]),
      ),
    );
    expect(second.map((r) => r.status)).toEqual(Array(50).fill(200));

    const want = { [a]: 0, [b]: 0, [c]: 0, [d]: 0 };
    voters.forEach((_, i) => {
      const ids = i < 25 ? [c, d] : i < 35 ? [] : i % 2 ? [a] : [a, b];
      for (const id of ids) want[id]! += 1;
    });
    const db = t.app.get(DataSource);
    const [poll] = await db.query(`SELECT total_votes, voter_count FROM polls WHERE id = $1`, [m.poll.id]);
    const options = await db.query(
      `SELECT o.id, o.vote_count, (SELECT count(*)::int FROM poll_votes v WHERE v.option_id = o.id) AS rows
         FROM poll_options o WHERE o.poll_id = $1 ORDER BY o.position`,
      [m.poll.id],
    );
    expect(
      options.map((o: { id: string; vote_count: number; rows: number }) => [o.vote_count, o.rows]),
    ).toEqual([a, b, c, d].map((id) => [want[id], want[id]]));
    const total = Object.values(want).reduce((x, y) => x + y, 0);
    expect([poll.total_votes, poll.voter_count]).toEqual([total, 40]);

    // one user's requests racing each other: whichever lands last, the counters match the rows
    const racer = voters[0]!;
    const sets = [[a], [b, c], [], [a, b, c, d], [d], [], [c], [a, d]];
    const raced = await Promise.all(
      sets.map((ids) => (ids.length ? vote(racer, ids) : racer.api.delete(`/v1/messages/${m.id}/poll/vote`))),
    );
    expect(raced.map((r) => r.status)).toEqual(Array(sets.length).fill(200));
    const [after] = await db.query(
      `SELECT p.total_votes, p.voter_count,
              (SELECT count(*)::int FROM poll_votes v WHERE v.poll_id = p.id) AS rows,
              (SELECT count(DISTINCT user_id)::int FROM poll_votes v WHERE v.poll_id = p.id) AS voters,
              (SELECT bool_and(o.vote_count = (SELECT count(*) FROM poll_votes v WHERE v.option_id = o.id))
                 FROM poll_options o WHERE o.poll_id = p.id) AS options_exact
         FROM polls p WHERE p.id = $1`,
      [m.poll.id],
    );
    expect([after.total_votes, after.voter_count, after.options_exact]).toEqual([
      after.rows,
      after.voters,
      true,
    ]);
  });
});
