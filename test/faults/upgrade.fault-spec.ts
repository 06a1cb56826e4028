/**
 * Upgrades with the old and new releases side by side (issue 30, docs/UPGRADES.md): the previous
 * release's build (support/previous-build.ts) serves; this build starts on the same PostgreSQL and
 * Redis, migrating the schema under it; both serve sends, history and sockets; an old instance restarts
 * in the middle (on a schema newer than it knows) and serves again. Nothing acknowledged is lost, no
 * answer is a 5xx, each channel's seq stays contiguous, and the sockets on either build get every
 * message. A migration that breaks the previous release (a column it reads renamed, say) fails here.
 */
import { closeAllSockets, connectSocket, TestSocket } from '../support/socket';
import { channelEvents, ChatRoom, chatRoom, send } from './support/chat';
import { previousBuild, PreviousBuild } from './support/previous-build';
import { OwnStack, ServiceProcess } from './support/processes';

jest.setTimeout(600_000);

describe('upgrade: the previous release beside this build', () => {
  let previous: PreviousBuild | undefined;
  const stack = new OwnStack();
  const adminToken = stack.adminToken;

  beforeAll(async () => {
    previous = previousBuild();
    await stack.start({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000' });
  }, 600_000);
  afterAll(async () => {
    closeAllSockets();
    await stack.stop();
    previous?.remove();
  });

  const start = (name: string, build: 'previous' | 'this'): Promise<ServiceProcess> =>
    stack.service(name, {}, build === 'previous' ? previous!.main : undefined);

  it('both serve sends, history and sockets while this build migrates under the previous one; nothing lost, no 5xx', async () => {
    let old = await start('previous-1', 'previous');
    const room: ChatRoom = await chatRoom({ adminToken }, old, ['ana', 'bo', 'cy']);
    const [ana, bo, cy] = room.users as [ChatRoom['users'][0], ChatRoom['users'][0], ChatRoom['users'][0]];

    // steady sends through whichever instances are up, until told to stop
    const up = new Set<ServiceProcess>([old]);
    const answers: { status: number; via: string; body: any }[] = [];
    let sending = true;
    const senders = [ana, bo].map(async (u, i) => {
      for (let n = 0; sending; n++) {
        const via = [...up][n % up.size]!;
        const r = await send(via, room, u, `${u.externalId} ${i}-${n}`);
        answers.push({ status: r.status, via: via.name, body: r.body });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const acknowledged = () => answers.filter((a) => a.status === 201);
    const sentAtLeast = async (n: number) => {
      const until = acknowledged().length + n;
      while (acknowledged().length < until) await new Promise((r) => setTimeout(r, 50));
    };

    await sentAtLeast(20);
    // this build starts on the same database: it migrates the schema under the previous release
    const fresh = await start('this-1', 'this');
    up.add(fresh);
    const onThis: TestSocket = await connectSocket(fresh.baseUrl, cy.token);
    let onPrevious: TestSocket = await connectSocket(old.baseUrl, cy.token);
    // the sends in flight while it connected (one per sender) may have committed before it joined
    const firstSeenBySockets = acknowledged().length + 2;
    await sentAtLeast(40);

    // an instance of the previous release restarts mid-rollout, on a schema newer than it knows
    up.delete(old);
    await old.stop();
    old = await start('previous-2', 'previous');
    up.add(old);
    onPrevious = await connectSocket(old.baseUrl, cy.token);
    const restartedAt = acknowledged().length + 2;
    await sentAtLeast(40);
    sending = false;
    await Promise.all(senders);

    // no answer but 201: no 5xx, no refused connection, from either build
    expect(
      answers.filter((a) => a.status !== 201).map((a) => `${a.via}: ${a.status} ${JSON.stringify(a.body)}`),
    ).toEqual([]);
    expect(new Set(answers.map((a) => a.via))).toEqual(new Set(['previous-1', 'this-1', 'previous-2']));

    // history, read through each build: every acknowledged send, once; the channel's seq contiguous
    const sent = acknowledged().map((a) => a.body.id as string);
    for (const via of [old, fresh]) {
      // every page: a slow machine's run sends fewer, a fast one's more than a page holds
      const events = await channelEvents(via, room);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const messages = events.filter((e) => e.type === 'message.new').map((e) => e.data.id);
      expect(messages.length).toBe(sent.length);
      expect(new Set(messages)).toEqual(new Set(sent));
    }

    // sockets on either build got every message sent while they were connected (control: the last one)
    const last = acknowledged()[acknowledged().length - 1]!.body.id as string;
    for (const [socket, from] of [
      [onThis, firstSeenBySockets],
      [onPrevious, restartedAt],
    ] as const) {
      await socket.waitFor('message.new', (p) => p.data.id === last, 15_000);
      const got = new Set(
        socket.events.filter((e) => e.name === 'message.new').map((e) => e.payload.data.id),
      );
      const expected = acknowledged()
        .slice(from)
        .map((a) => a.body.id as string);
      expect(expected.filter((id) => !got.has(id))).toEqual([]);
    }
  });
});
