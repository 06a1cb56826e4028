import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { Receiver, ReceivedRequest } from '../support/receiver';
import { createWebhook, eventOf, expectedSignature, sleep } from './helpers';

const ALL = [
  'message.created',
  'message.updated',
  'message.deleted',
  'message.reaction.added',
  'message.reaction.removed',
  'message.mentioned',
  'message.moderated',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'member.joined',
  'member.left',
  'user.created',
];

/** Every webhook event type of SPEC.md, produced through the API and checked at a real receiver. */
describe('webhook event payloads', () => {
  let t: TestApp;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('delivers each event type with the data SPEC.md gives it, signed, once per event', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ALL);
    const one = async (
      event: string,
      pred: (d: ReceivedRequest['json']) => boolean = () => true,
    ): Promise<ReceivedRequest> => {
      const [r] = await rx.waitFor(url, { pred: (q) => eventOf(q) === event && pred(q.json.data) });
      return r!;
    };

    const [ana, bo, cy] = await ws.users('ana', 'bo', 'cy');
    expect((await one('user.created', (d) => d.user.external_id === 'cy')).json.data.user).toMatchObject({
      id: cy!.id,
      external_id: 'cy',
    });

    const ch = (
      await ws.api
        .post('/v1/channels', {
          type: 'group',
          external_id: 'room',
          name: 'Room',
          created_by: 'ana',
          member_external_ids: ['bo'],
        })
        .expect(201)
    ).body;
    expect((await one('channel.created')).json.data.channel).toMatchObject({
      id: ch.id,
      external_id: 'room',
      type: 'group',
      name: 'Room',
    });

    await ws.api.patch(`/v1/channels/${ch.id}`, { name: 'Renamed' }).expect(200);
    expect((await one('channel.updated')).json.data.channel).toMatchObject({ id: ch.id, name: 'Renamed' });

    await ws.api.post(`/v1/channels/${ch.id}/members`, { member_external_ids: ['cy'] }).expect(200);
    expect((await one('member.joined')).json.data).toMatchObject({
      channel_id: ch.id,
      channel_external_id: 'room',
      user_id: cy!.id,
      external_id: 'cy',
    });

    const m = (
      await ws.api
        .post(`/v1/channels/${ch.id}/messages`, {
          content: 'hi @bo',
          mentions: ['bo'],
          user_external_id: 'ana',
        })
        .expect(201)
    ).body;
    const created = (await one('message.created', (d) => d.message.id === m.id)).json.data.message;
    expect(created).toMatchObject({
      id: m.id,
      channel_id: ch.id,
      channel_external_id: 'room',
      user: { id: ana!.id, external_id: 'ana', name: 'ana' },
      content: 'hi @bo',
      type: 'text',
      attachment_url: null,
      created_at: m.created_at,
      mentions: [{ user_id: bo!.id, external_id: 'bo', name: 'bo' }],
    });
    expect(created).not.toHaveProperty('parent_id');
    const mentioned = (await one('message.mentioned')).json.data;
    expect(mentioned).toMatchObject({
      message_id: m.id,
      channel_id: ch.id,
      channel_external_id: 'room',
      mentions: [{ user_id: bo!.id, external_id: 'bo' }],
    });
    expect(JSON.stringify(mentioned.by_user)).toContain(ana!.id);

    const reply = (
      await ws.api
        .post(`/v1/channels/${ch.id}/messages`, { content: 're', parent_id: m.id, user_external_id: 'bo' })
        .expect(201)
    ).body;
    expect((await one('message.created', (d) => d.message.id === reply.id)).json.data.message).toMatchObject({
      parent_id: m.id,
      quoted_message: { id: m.id, content: 'hi @bo', deleted: false },
    });

    const edited = (await ana!.api.patch(`/v1/messages/${m.id}`, { content: 'hello' }).expect(200)).body;
    expect((await one('message.updated')).json.data).toEqual({
      message: {
        id: m.id,
        channel_id: ch.id,
        channel_external_id: 'room',
        content: 'hello',
        metadata: {},
        previews: [],
        edited_at: edited.edited_at,
      },
    });

    await bo!.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '👍' }).expect(200);
    await bo!.api.post(`/v1/messages/${m.id}/reactions`, { emoji: '🎉' }).expect(200); // replace: removal then addition
    const reaction = (emoji: string) => ({
      message_id: m.id,
      channel_id: ch.id,
      channel_external_id: 'room',
      user_id: bo!.id,
      emoji,
    });
    expect((await one('message.reaction.removed')).json.data).toEqual({ reaction: reaction('👍') });
    expect((await one('message.reaction.added', (d) => d.reaction.emoji === '🎉')).json.data).toEqual({
      reaction: reaction('🎉'),
    });

    const deleted = (await ana!.api.delete(`/v1/messages/${m.id}`).expect(200)).body;
    expect((await one('message.deleted')).json.data).toEqual({
      message: { id: m.id, channel_id: ch.id, channel_external_id: 'room', deleted_at: deleted.deleted_at },
    });

    await ws.api
      .patch('/v1/workspace/settings', { moderation: { enabled: true, rules: ['link'], action: 'reject' } })
      .expect(200);
    await ws.api
      .post(`/v1/channels/${ch.id}/messages`, { content: 'see https://spam.example', user_external_id: 'cy' })
      .expect(422);
    expect((await one('message.moderated')).json.data).toMatchObject({
      channel_id: ch.id,
      channel_external_id: 'room',
      user_id: cy!.id,
      rule: 'link',
      action: 'reject',
    });

    await ws.api
      .delete(`/v1/channels/${ch.id}/members/cy`)
      .expect((r) => expect([200, 204]).toContain(r.status));
    expect((await one('member.left')).json.data).toMatchObject({
      channel_id: ch.id,
      user_id: cy!.id,
      external_id: 'cy',
    });

    await ws.api.delete(`/v1/channels/${ch.id}`).expect(204);
    expect((await one('channel.deleted')).json.data.channel).toMatchObject({
      id: ch.id,
      external_id: 'room',
    });

    await sleep(500);
    const all = rx.received(url);
    for (const r of all) {
      expect(r.headers['x-service-signature']).toBe(
        expectedSignature(wh.signing_secret!, r.headers['x-service-timestamp'] as string, r.raw),
      );
      expect(r.json.workspace_id).toBe(ws.id);
      expect(r.headers['x-service-event']).toBe(r.json.event);
    }
    expect(new Set(all.map((r) => r.json.event_id)).size).toBe(all.length); // once each
    expect(new Set(all.map(eventOf))).toEqual(new Set(ALL));
  });
});
