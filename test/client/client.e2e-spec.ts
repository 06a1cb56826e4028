/**
 * @chat-service/client against the real service (embedded database here; PostgreSQL and Redis under
 * npm run test:integration): the REST methods, sends retried with one idempotency key, and realtime that
 * misses nothing and repeats nothing while the socket is dropped, closed by the server, or left out of
 * its channel's fan-out, as another user keeps sending.
 */
import { ChatApiError, ChatClient } from '../../packages/client/src';
import { RealtimeGateway } from '../../src/realtime/realtime.gateway';
import { channelRoom, userRoom } from '../../src/realtime/realtime-events';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';
import { closeAllSockets, connectSocket } from '../support/socket';
import { expectAllReceived, messagesOf, Recorded, recordedClient, sleep, until } from './support';

describe('@chat-service/client', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser, bo: TestUser;
  let channel: { id: string; external_id: string };
  const open: ChatClient[] = [];
  const track = (r: Recorded) => (open.push(r.client), r);

  beforeAll(async () => {
    // the senders here send faster than the default 60 a minute
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000' });
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    [ana, bo] = (await ws.users('ana', 'bo')) as [TestUser, TestUser];
    channel = (
      await ws.api.post('/v1/channels', {
        type: 'group',
        external_id: 'team',
        name: 'Team',
        created_by: 'ana',
        member_external_ids: ['bo'],
      })
    ).body;
  });
  afterEach(() => {
    closeAllSockets();
    for (const c of open.splice(0)) c.disconnect();
  });

  it('covers the end-user routes with typed methods, and answers errors as ChatApiError', async () => {
    const { client: a } = track(recordedClient(t, ws, ana));
    const { client: b } = track(recordedClient(t, ws, bo));

    const mine = await a.listMyChannels();
    expect(mine.channels.map((c) => [c.external_id, c.role])).toEqual([['team', 'admin']]);
    expect((await a.getMyChannel('team')).id).toBe(channel.id);

    const hello = await a.sendMessage('team', { content: 'Hello @bo', mentions: ['bo'] });
    expect([hello.content, hello.mentions?.map((m) => m.external_id)]).toEqual(['Hello @bo', ['bo']]);
    // the same idempotency key answers the original message
    const once = await a.sendMessage('team', { content: 'once', idempotency_key: 'k-1' });
    expect((await a.sendMessage('team', { content: 'once', idempotency_key: 'k-1' })).id).toBe(once.id);

    const reply = await b.sendMessage(channel.id, { content: 'hi', parent_id: hello.id });
    expect(reply.quoted_message?.content).toBe('Hello @bo');
    const inThread = await b.sendMessage(channel.id, { content: 'thread reply', thread_id: hello.id });
    expect((await a.listReplies(hello.id)).messages.map((m) => m.id)).toEqual([inThread.id]);

    expect((await a.editMessage(once.id, { content: 'once, edited' })).edited_at).toEqual(expect.any(String));
    expect((await b.addReaction(once.id, '🎉')).reactions).toEqual([
      { emoji: '🎉', count: 1, reacted_by_me: true },
    ]);
    expect((await b.removeReaction(once.id, '🎉')).reactions).toEqual([]);
    expect((await a.pinMessage(hello.id)).pinned_at).toEqual(expect.any(String));
    expect((await a.listPins('team')).messages.map((m) => m.id)).toEqual([hello.id]);
    expect((await a.unpinMessage(hello.id)).pinned_at).toBeNull();

    const page1 = await a.listMessages('team', { limit: 2 });
    expect(page1.has_more).toBe(true);
    const page2 = await a.listMessages('team', { limit: 10, before: page1.next_cursor! });
    expect([...page1.messages, ...page2.messages].map((m) => m.content)).toEqual([
      'hi',
      'once, edited',
      'Hello @bo',
    ]);

    const unread = (await b.listMyChannels()).channels[0]!;
    expect([unread.unread_count, unread.mention_unread_count]).toEqual([2, 1]);
    expect((await b.markDelivered('team')).last_delivered_at).toEqual(expect.any(String));
    const read = await b.markRead('team');
    expect((await a.getReceipts('team')).members.find((m) => m.external_id === 'bo')?.last_read_at).toBe(
      read.last_read_at,
    );
    expect((await a.getPresence('team')).members.map((m) => m.external_id).sort()).toEqual(['ana', 'bo']);

    expect((await a.searchMessages({ q: 'edited' })).messages.map((r) => r.id)).toEqual([once.id]);
    expect((await a.searchChannelMessages('team', { q: 'hello' })).messages.map((r) => r.id)).toEqual([
      hello.id,
    ]);

    expect((await a.unsendMessage(once.id)).content).toBe('');
    expect((await b.setChannelState('team', { archived: true })).archived).toBe(true);
    await b.blockUser('ana');
    expect((await b.listBlocks()).blocks.map((x) => x.external_id)).toEqual(['ana']);
    await b.unblockUser('ana');
    await b.registerDevice({ token: 'device-1', platform: 'web' });
    expect((await b.listDevices()).devices.map((d) => d.platform)).toEqual(['web']);
    await b.unregisterDevice('device-1');

    const events = await b.listChannelEvents('team', { after_seq: 0, limit: 3 });
    expect(events.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await b.sync()).next_cursor).toEqual(expect.any(String));

    const err = await a.listMessages('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChatApiError);
    expect([(err as ChatApiError).status, (err as ChatApiError).code]).toEqual([404, 'NOT_FOUND']);
    const bad = await a.sendMessage('team', { content: '   ' }).catch((e: unknown) => e);
    expect([(bad as ChatApiError).status, (bad as ChatApiError).code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('saves, reads, lists and deletes drafts, which reach the user’s other client live', async () => {
    const phone = track(recordedClient(t, ws, ana));
    const laptop = track(recordedClient(t, ws, ana));
    await laptop.client.connect();
    expect(await phone.client.getDraft('team')).toBeNull();
    const saved = await phone.client.saveDraft('team', { content: 'half a thought', mentions: ['bo'] });
    expect([saved?.channel_id, saved?.content, saved?.mentions]).toEqual([
      channel.id,
      'half a thought',
      ['bo'],
    ]);
    await until('the laptop hears of the draft', () =>
      laptop.events.some((e) => e.type === 'draft.updated' && e.data.draft.content === 'half a thought'),
    );
    expect((await laptop.client.getDraft('team'))?.updated_at).toBe(saved?.updated_at);
    expect((await laptop.client.listMyDrafts()).drafts.map((d) => d.content)).toEqual(['half a thought']);
    expect(await phone.client.saveDraft('team', { content: '  ' })).toBeNull();
    await until('the laptop hears the draft went', () =>
      laptop.events.some((e) => e.type === 'draft.deleted' && e.data.channel_id === channel.id),
    );
    await phone.client.saveDraft('team', { content: 'again' });
    await phone.client.deleteDraft('team');
    expect((await laptop.client.listMyDrafts()).drafts).toEqual([]);
  });

  it('sets, re-times, lists and deletes reminders, and hears one fire', async () => {
    const a = track(recordedClient(t, ws, ana));
    await a.client.connect();
    const m = await a.client.sendMessage('team', { content: 'remind me' });
    const saved = await a.client.createReminder(m.id);
    expect([saved.message_id, saved.status, saved.remind_at]).toEqual([m.id, 'saved', null]);
    const at = new Date(Date.now() + 1500).toISOString();
    expect((await a.client.updateReminder(m.id, { remind_at: at })).status).toBe('upcoming');
    await until('the reminder fires', () =>
      a.events.some((e) => e.type === 'notification.reminder_due' && e.data.reminder.id === saved.id),
    );
    expect((await a.client.listMyReminders({ filter: 'due' })).reminders.map((r) => r.id)).toEqual([
      saved.id,
    ]);
    await a.client.deleteReminder(m.id);
    expect((await a.client.listMyReminders()).reminders).toEqual([]);
    const again = await a.client.deleteReminder(m.id).catch((e: unknown) => e);
    expect([(again as ChatApiError).status, (again as ChatApiError).code]).toEqual([404, 'NOT_FOUND']);
  });

  it('schedules, lists, changes and cancels messages, and hears one sent', async () => {
    const a = track(recordedClient(t, ws, ana));
    await a.client.connect();
    const far = new Date(Date.now() + 3600_000).toISOString();
    const s1 = (await a.client.scheduleMessage('team', { content: 'first draft', scheduled_at: far }))
      .scheduled_message!;
    const s2 = (await a.client.scheduleMessage('team', { content: 'never', scheduled_at: far }))
      .scheduled_message!;
    expect([s1.status, s1.scheduled_at, s1.content]).toEqual(['pending', far, 'first draft']);
    const soon = new Date(Date.now() + 1500).toISOString();
    const changed = await a.client.updateScheduledMessage(s1.id, { content: 'final', scheduled_at: soon });
    expect([changed.content, changed.scheduled_at]).toEqual(['final', soon]);
    expect((await a.client.listMyScheduledMessages()).scheduled_messages.map((x) => x.id)).toEqual([
      s1.id,
      s2.id,
    ]);
    await a.client.cancelScheduledMessage(s2.id);
    await until('the scheduled message is sent', () =>
      a.events.some((e) => e.type === 'scheduled.sent' && e.data.scheduled_message_id === s1.id),
    );
    const sent = a.events.find((e) => e.type === 'scheduled.sent');
    expect(sent?.type === 'scheduled.sent' && sent.data.message.content).toBe('final');
    expect((await a.client.listMyScheduledMessages()).scheduled_messages).toEqual([]);
    const gone = await a.client.cancelScheduledMessage(s1.id).catch((e: unknown) => e);
    expect([(gone as ChatApiError).status, (gone as ChatApiError).code]).toEqual([404, 'NOT_FOUND']);
  });

  it('creates a poll, votes, lists the voters, closes it, and hears the counts change', async () => {
    const a = track(recordedClient(t, ws, ana));
    const b = track(recordedClient(t, ws, bo));
    await a.client.connect();
    const m = await a.client.createPoll('team', { question: 'Where?', options: ['Here', 'There'] });
    const [here, there] = m.poll!.options.map((o) => o.id) as [string, string];
    expect((await b.client.votePoll(m.id, [there])).poll!.my_votes).toEqual([there]);
    expect((await b.client.votePoll(m.id, [here])).poll!.options.map((o) => o.vote_count)).toEqual([1, 0]);
    expect((await b.client.listPollVotes(m.id)).votes.map((v) => [v.user.external_id, v.option_id])).toEqual([
      ['bo', here],
    ]);
    expect((await b.client.withdrawPollVote(m.id)).poll!.voter_count).toBe(0);
    expect((await a.client.closePoll(m.id)).poll!.closed).toBe(true);
    await until('the close is heard', () =>
      a.events.some((e) => e.type === 'message.updated' && 'poll' in e.data && e.data.poll.closed),
    );
    const late = await b.client.votePoll(m.id, [here]).catch((e: unknown) => e);
    expect([(late as ChatApiError).status, (late as ChatApiError).code]).toEqual([409, 'POLL_CLOSED']);
  });

  it('reads and marks threads, lists the caller’s threads, and hears its own thread read state', async () => {
    const a = track(recordedClient(t, ws, ana));
    const b = track(recordedClient(t, ws, bo));
    await a.client.connect();
    const root = await a.client.sendMessage('team', { content: 'a question' });
    expect(root.thread).toEqual({ participant: true, unread_replies: 0, last_read_at: root.created_at });
    const r1 = await b.client.sendMessage('team', { content: 'one', thread_id: root.id });
    await b.client.sendMessage('team', { content: 'two', thread_id: root.id });
    const mine = await a.client.listMyThreads({ unread_only: true });
    expect(mine.threads.map((x) => [x.thread_id, x.unread_replies, x.root.thread?.unread_replies])).toEqual([
      [root.id, 2, 2],
    ]);
    expect((await a.client.getMyChannel('team')).unread_threads).toBe(1);
    const read = await a.client.markThreadRead(root.id);
    expect(read.unread_replies).toBe(0);
    await until('the client hears its thread read', () =>
      a.events.some((e) => e.type === 'notification.thread_read' && e.data.thread_id === root.id),
    );
    expect((await a.client.markThreadUnread(root.id, r1.id)).unread_replies).toBe(2);
    expect((await a.client.markThreadUnread(root.id)).unread_replies).toBe(1);
    expect((await a.client.listMyThreads({ unread_only: true })).threads).toHaveLength(1);
  });

  it('retries a send whose answer was lost with the same idempotency key: one message, acknowledged', async () => {
    let lost = 0;
    const keys: string[] = [];
    const losing: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      // the client calls fetch with a URL string and a JSON string body
      if (init?.method === 'POST' && typeof input === 'string' && input.endsWith('/messages')) {
        keys.push((JSON.parse(init.body as string) as { idempotency_key: string }).idempotency_key);
        if (lost++ < 2) throw new TypeError('fetch failed: the connection dropped before the answer'); // the service stored it
      }
      return res;
    };
    const { client: a } = track(recordedClient(t, ws, ana, { fetch: losing, sendRetry: { minDelayMs: 10 } }));
    const m = await a.sendMessage('team', { content: 'exactly once' });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    const history = (await a.listMessages('team')).messages.filter((x) => x.content === 'exactly once');
    expect(history.map((x) => x.id)).toEqual([m.id]);
  });

  it('subscribes to presence (state now, then presence.changed), pages presence, and answers a refused subscription as ChatApiError', async () => {
    const c = new ChatClient({ baseUrl: t.baseUrl, token: ana.token });
    open.push(c);
    const seen: { external_id: string; online: boolean }[] = [];
    c.on('presence.changed', (d) => void seen.push({ external_id: d.external_id, online: d.online }));
    await expect(c.subscribePresence(['bo'])).rejects.toMatchObject({ code: 'NETWORK_ERROR' }); // not connected
    await c.connect();
    expect(await c.subscribePresence(['bo', 'nobody'])).toEqual([
      { external_id: 'bo', online: false, last_seen_at: null },
    ]);
    await connectSocket(t.baseUrl, bo.token);
    await until('bo online', () => seen.some((x) => x.external_id === 'bo' && x.online));
    const page = await c.getPresence(channel.id, { limit: 1 });
    expect(page).toMatchObject({
      online_count: 2,
      has_more: true,
      members: [{ external_id: 'ana', online: true }],
    });
    const e = await c.subscribePresence([]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ChatApiError);
    expect((e as ChatApiError).code).toBe('VALIDATION_ERROR');
    await c.unsubscribePresence(['bo']);
  });

  it('connect() fails with ChatApiError UNAUTHORIZED for a token the service refuses', async () => {
    const c = new ChatClient({ baseUrl: t.baseUrl, token: 'not-a-token' });
    open.push(c);
    const e = await c.connect().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ChatApiError);
    expect((e as ChatApiError).code).toBe('UNAUTHORIZED');
  });

  it('misses no message and repeats none while its socket is dropped, closed by the server and left out of the fan-out, as another user keeps sending', async () => {
    // cy's plain socket witnesses what the service fanned out while bo's socket was left out
    const cy = await ws.user('cy');
    expect(
      (await ws.api.post(`/v1/channels/${channel.id}/members`, { member_external_ids: ['cy'] })).status,
    ).toBe(200);
    const witness = await connectSocket(t.baseUrl, cy.token);
    const reader = track(recordedClient(t, ws, bo));
    const sender = track(recordedClient(t, ws, ana)).client;
    await reader.client.connect();
    expect(reader.client.status).toBe('connected');
    const server = t.app.get(RealtimeGateway).server;

    const sent: string[] = [];
    let sending = true;
    const sends = (async () => {
      for (let i = 0; sending; i++) {
        sent.push((await sender.sendMessage('team', { content: `m${i}` })).id);
        await sleep(10);
      }
    })();
    const disruptions: string[] = [];
    const disrupt = async (round: number) => {
      // each disruption on a socket that is up and caught up, with messages in between
      await until('the reader connected again', () => reader.client.status === 'connected');
      const before = sent.length;
      await until('some messages between disruptions', () => sent.length >= before + 5);
      switch (round % 3) {
        case 0: // the transport drops (a network change): socket.io reconnects by itself
          reader.client.socket!.io.engine.close();
          await until('the reader noticed', () => reader.client.status !== 'connected');
          disruptions.push('transport closed');
          break;
        case 1: // the service closes the socket: the client reconnects on its own
          server.in(userRoom(bo.id)).disconnectSockets(true);
          await until('the reader noticed', () => reader.client.status !== 'connected');
          disruptions.push('closed by the server');
          break;
        case 2: {
          // the socket stays up but misses a stretch of the channel's events (a lost fan-out)
          server.in(userRoom(bo.id)).socketsLeave(channelRoom(channel.id));
          const from = sent.length;
          await until('messages sent while out of the room', () => sent.length >= from + 3);
          await witness.waitFor('message.new', (e) => e.data.id === sent[from + 2], 30_000);
          server.in(userRoom(bo.id)).socketsJoin(channelRoom(channel.id));
          // the reader sees the jump with the next message it gets (delivery may lag the sends under load)
          const back = sent.length;
          await until('a message sent after the reader was back in the room reached it', () =>
            messagesOf(reader.events, channel.id).some((m) => sent.indexOf(m.id) >= back),
          );
          disruptions.push('left out of the fan-out');
          break;
        }
      }
    };
    try {
      for (let round = 0; round < 6; round++) await disrupt(round);
      const last = sent.length;
      await until('more messages after the last disruption', () => sent.length >= last + 10);
    } finally {
      sending = false;
      await sends;
    }

    await expectAllReceived(reader.events, channel.id, sent);
    expect(disruptions).toHaveLength(6);
    witness.close();
    // the client's own repairs did it: a fill from the channel's events, catch-ups after reconnects
    expect(reader.calls.filter((c) => c === `GET /v1/channels/${channel.id}/events`).length).toBeGreaterThan(
      0,
    );
    expect(reader.calls.filter((c) => c === 'GET /v1/me/sync').length).toBeGreaterThan(4);
    expect(reader.statuses.filter((s) => s === 'connecting').length).toBeGreaterThanOrEqual(4);
  });

  it('asks its token provider again before the token expires and receives everything across the reconnects', async () => {
    const reader = track(recordedClient(t, ws, bo, { ttlSeconds: 3 }));
    const sender = track(recordedClient(t, ws, ana)).client;
    await reader.client.connect();
    const sent: string[] = [];
    const started = Date.now();
    while (Date.now() - started < 7_000) {
      sent.push((await sender.sendMessage('team', { content: `t${sent.length}` })).id);
      await sleep(100);
    }
    await expectAllReceived(reader.events, channel.id, sent);
    expect(reader.tokensIssued()).toBeGreaterThanOrEqual(3);
    // and it stays connected (a token renewal's reconnect may be under way at this instant)
    await until('the reader connected', () => reader.client.status === 'connected');
  });
});
