import { closeAllSockets, connectSocket } from '../support/socket';
import { call, ChatRoom, chatRoom, historyIds, isContractError, Reply, send } from './support/chat';
import { FaultEnvironment, poll, sleep } from './support/processes';

/** Issue 11, finding 3: PostgreSQL restarted (`pg_ctl restart -m fast`) under two API instances and a worker. */
export function postgresRestart(environment: () => FaultEnvironment): void {
  describe('a PostgreSQL restart', () => {
    let env: FaultEnvironment;
    let room: ChatRoom;

    beforeAll(async () => {
      env = environment();
      room = await chatRoom(env, env.apis[0], ['ana', 'bo', 'cy']);
    });
    afterEach(() => closeAllSockets());

    it('answers 503 UNAVAILABLE (never 500) while the database is away, loses no acknowledged message, and recovers without a restart', async () => {
      const acked: string[] = [];
      const replies: { via: string; phase: string; r: Reply }[] = [];
      const acks: { via: string; phase: string; ack: any }[] = [];
      let phase = 'before';
      let sending = true;
      // on each instance, three users send and read back to back over REST, one over its socket, so
      // requests are in flight on pooled connections when the server terminates them
      const sockets = await Promise.all(
        env.apis.map((api) => connectSocket(api.baseUrl, room.users[0]!.token)),
      );
      const loops = env.apis.flatMap((api, a) => [
        ...room.users.map(async (user) => {
          for (let i = 0; sending; i++) {
            const r =
              i % 3 === 2
                ? await call(api, 'GET', `/v1/channels/${room.channelId}/messages?limit=5`, user.auth)
                : await send(api, room, user, `${api.name} ${user.externalId} ${i}`);
            replies.push({ via: `${api.name} ${user.externalId}`, phase, r });
            if (r.status === 201) acked.push(r.body.id);
            if (r.status !== 200 && r.status !== 201) await sleep(50);
          }
        }),
        (async () => {
          for (let i = 0; sending; i++) {
            const ack = await sockets[a]!.emitAck(
              'message.send',
              { channel_id: room.channelId, content: `socket ${api.name} ${i}` },
              30_000,
            );
            acks.push({ via: `${api.name} socket`, phase, ack });
            if (ack.ok) acked.push(ack.data.id);
            // a well-behaved client: within the per-user socket budget (SERVICE_SOCKET_EVENTS_PER_SECOND,
            // 20) even when the instance answers fast, which the flood test covers, not this one
            await sleep(ack.ok ? 100 : 50);
          }
        })(),
      ]);
      try {
        await sleep(1_500);
        phase = 'restart';
        await env.pg.restart();
        phase = 'after';
        // the instances reconnect on their own: a send through each succeeds again
        for (const api of env.apis)
          await poll(
            `${api.name} sends again`,
            async () => (await send(api, room, room.users[0]!, 'probe')).status === 201,
            30_000,
            200,
          );
        await sleep(1_000);
      } finally {
        sending = false;
        await Promise.all(loops);
      }
      env.expectAllAlive();

      const unexpected = replies.filter(
        ({ r }) =>
          !(r.status === 200 || r.status === 201 || (r.status === 503 && isContractError(r, 'UNAVAILABLE'))),
      );
      expect(
        unexpected.map(({ via, phase: p, r }) => `${via} (${p}): ${r.status} ${JSON.stringify(r.body)}`),
      ).toEqual([]);
      // socket sends alike: acknowledged, or refused with UNAVAILABLE in the contract's error shape
      const badAcks = acks.filter(
        ({ ack }) =>
          !(ack.ok === true || (ack.error?.code === 'UNAVAILABLE' && typeof ack.error.message === 'string')),
      );
      expect(badAcks.map(({ via, phase: p, ack }) => `${via} (${p}): ${JSON.stringify(ack)}`)).toEqual([]);
      for (const s of sockets) expect(s.socket.connected).toBe(true);
      // the restart was noticed (else this proves nothing): some requests met it and answered 503
      expect(replies.filter(({ r }) => r.status === 503).length).toBeGreaterThan(0);

      // every message acknowledged with 201 is in history afterwards
      const history = new Set(await historyIds(env.apis[1], room, room.users[1]!));
      expect(acked.filter((id) => !history.has(id))).toEqual([]);
      for (const s of env.all())
        expect([s.name, (await call(s, 'GET', '/readyz', null)).status]).toEqual([s.name, 200]);
    });
  });
}
