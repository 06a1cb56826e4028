import { DataSource } from 'typeorm';
import { history, Msg } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

const roles = (ch: { members: { external_id: string; role: string | null }[] }) =>
  Object.fromEntries(ch.members.map((m) => [m.external_id, m.role]));

interface Logged {
  type: string;
  seq: number;
  payload: Record<string, unknown>;
}

describe('membership side effects', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo] = [await ws.user('ana', 'Ana'), await ws.user('bo', 'Bo')];
    await ws.user('cy', 'Cy');
    await ws.user('di'); // no name: notices fall back to the external id
  });

  const group = async (members = ['bo', 'cy']) => {
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `g-${Math.random().toString(36).slice(2)}`,
      name: 'G',
      created_by: 'ana',
      member_external_ids: members,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; external_id: string };
  };
  const events = (channelId: string): Promise<Logged[]> =>
    t.app
      .get(DataSource)
      .query(`SELECT type, seq::int AS seq, payload FROM events WHERE channel_id = $1 ORDER BY seq`, [
        channelId,
      ]);
  const systemContents = async (channelId: string) =>
    (await history(ws.api, channelId)).messages
      .filter((m) => m.type === 'system')
      .map((m) => m.content)
      .reverse();

  describe('system messages for membership changes (CONTRACT §6)', () => {
    it('are off by default: member changes post nothing', async () => {
      const ch = await group();
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di'] })).status,
      ).toBe(200);
      expect((await ws.api.delete(`/v1/channels/${ch.id}/members/di`)).status).toBe(204);
      expect((await history(ws.api, ch.id)).messages).toEqual([]);
    });

    it('when the setting is on, every kind of change posts one system message in the same transaction', async () => {
      expect(
        (await ws.api.patch('/v1/workspace/settings', { system_messages_for_membership: true })).status,
      ).toBe(200);
      const ch = await group();
      const base = `/v1/me/channels/${ch.id}`;
      expect((await ana.api.post(`${base}/members`, { member_external_ids: ['di'] })).status).toBe(200);
      expect((await ana.api.delete(`${base}/members/di`)).status).toBe(204);
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di'] })).status,
      ).toBe(200);
      expect(
        (await ws.api.delete(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di', 'cy'] })).status,
      ).toBe(204);
      expect((await bo.api.delete(`${base}/members/bo`)).status).toBe(204);
      // no-ops post nothing
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['ana'] })).status,
      ).toBe(200);
      expect((await ws.api.delete(`/v1/channels/${ch.id}/members/cy`)).status).toBe(204);
      expect(await systemContents(ch.id)).toEqual([
        'Ana added di',
        'Ana removed di',
        'di joined',
        'di and Cy were removed',
        'Bo left',
      ]);

      const h = await history(ana.api, ch.id);
      expect(h.messages[0]).toMatchObject({ type: 'system', user_id: null, user: null, content: 'Bo left' });
      // each notice's message.created directly follows the member event it describes
      const log = await events(ch.id);
      const types = log.map((e) => e.type);
      expect(types).toEqual([
        'channel.created',
        'member.joined',
        'message.created',
        'member.left',
        'message.created',
        'member.joined',
        'message.created',
        'member.left',
        'member.left',
        'message.created',
        'member.left',
        'message.created',
      ]);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      const last = log[log.length - 1]!.payload as { message: Record<string, unknown> };
      expect(last.message).toEqual({
        id: h.messages[0]!.id,
        channel_id: ch.id,
        channel_external_id: ch.external_id,
        user: null,
        content: 'Bo left',
        type: 'system',
        attachment_url: null,
        created_at: h.messages[0]!.created_at,
        metadata: {},
        previews: [],
      });
    });

    it('a refused change posts nothing (the transaction rolls back)', async () => {
      expect(
        (await ws.api.patch('/v1/workspace/settings', { system_messages_for_membership: true })).status,
      ).toBe(200);
      const ch = await group();
      expect(
        (await bo.api.post(`/v1/me/channels/${ch.id}/members`, { member_external_ids: ['di'] })).status,
      ).toBe(403);
      expect(
        (await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['di', 'ghost'] })).status,
      ).toBe(400);
      expect((await history(ws.api, ch.id)).messages).toEqual([]);
    });
  });

  describe('DELETE /v1/users/:external_id leaves every channel first', () => {
    it("the last admin's groups get their earliest-joined member promoted; members hear member.left", async () => {
      const ch = await group();
      const dm = (await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['ana', 'bo'] }))
        .body;
      const kept = (await ana.api.post(`/v1/channels/${ch.id}/messages`, { content: 'still here' }))
        .body as Msg;
      expect((await ws.api.delete('/v1/users/ana')).status).toBe(204);

      const got = (await ws.api.get(`/v1/channels/${ch.id}`)).body;
      expect(roles(got)).toEqual({ bo: 'admin', cy: 'member' });
      const log = await events(ch.id);
      expect(log.slice(-2).map((e) => [e.type, e.payload])).toEqual([
        [
          'member.left',
          { channel_id: ch.id, channel_external_id: ch.external_id, user_id: ana.id, external_id: 'ana' },
        ],
        [
          'member.role_changed',
          {
            channel_id: ch.id,
            channel_external_id: ch.external_id,
            user_id: bo.id,
            external_id: 'bo',
            role: 'admin',
          },
        ],
      ]);
      expect((await events(dm.id)).map((e) => e.type)).toEqual(['channel.created', 'member.left']);
      expect((await ws.api.get(`/v1/channels/${dm.id}`)).body.member_count).toBe(1);
      // the message stays, without its author
      const h = await history(ws.api, ch.id);
      expect(h.messages.map((m) => [m.id, m.user])).toEqual([[kept.id, null]]);
      // bo manages the group now
      expect((await bo.api.patch(`/v1/me/channels/${ch.id}`, { name: 'Renamed' })).status).toBe(200);
    });

    it('a group with another admin keeps its roles; with the setting on it hears "Ana left"', async () => {
      expect(
        (await ws.api.patch('/v1/workspace/settings', { system_messages_for_membership: true })).status,
      ).toBe(200);
      const ch = await group();
      expect((await ws.api.patch(`/v1/channels/${ch.id}/members/cy`, { role: 'admin' })).status).toBe(200);
      expect((await ws.api.delete('/v1/users/ana')).status).toBe(204);
      expect(roles((await ws.api.get(`/v1/channels/${ch.id}`)).body)).toEqual({ bo: 'member', cy: 'admin' });
      expect(await systemContents(ch.id)).toEqual(['Ana left']);
      expect((await events(ch.id)).map((e) => e.type).slice(-2)).toEqual(['member.left', 'message.created']);
    });

    it('a user in no channel is simply deleted; an unknown one is 404', async () => {
      expect((await ws.api.delete('/v1/users/di')).status).toBe(204);
      expect((await ws.api.get('/v1/users/di')).status).toBe(404);
      expect((await ws.api.delete('/v1/users/di')).status).toBe(404);
    });
  });
});
