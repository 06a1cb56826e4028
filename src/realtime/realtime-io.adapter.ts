import { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { IncomingMessage } from 'http';
import type Redis from 'ioredis';
import type { Namespace, Server, ServerOptions } from 'socket.io';
import type { Adapter, Room, SocketId } from 'socket.io-adapter';
import { CorsOrigins, socketOriginAllowed } from '../common/http/cors';
import type { FanoutLink } from '../infra/redis/fanout-link';
import { RedisService } from '../infra/redis/redis.module';
import { Metrics } from '../ops/metrics';
import { channelRoom, presenceBatchRoom, presenceRoom } from './realtime-events';

const CHANNEL_PREFIX = channelRoom('');
const BATCH = presenceRoom('batch');

/**
 * Keeps every socket of `presence:batch` in `presence-batch:channel:<id>` for each `channel:<id>` it
 * is in, whoever moves it (the gateway's joins, the publisher's socketsJoin/socketsLeave, requests from
 * other instances through Redis: they all end in addAll/del here). Batched presence then goes to that
 * room: no `except` over every other socket of the instance on each emit.
 */
export function withPresenceBatchRooms(adapter: Adapter): Adapter {
  const addAll = adapter.addAll.bind(adapter);
  const del = adapter.del.bind(adapter);
  adapter.addAll = (id: SocketId, rooms: Set<Room>) => {
    if (!rooms.has(BATCH) && !adapter.sids.get(id)?.has(BATCH)) return addAll(id, rooms);
    const all = new Set(rooms);
    for (const r of rooms)
      if (typeof r === 'string' && r.startsWith(CHANNEL_PREFIX)) all.add(presenceBatchRoom(r));
    return addAll(id, all);
  };
  adapter.del = (id: SocketId, room: Room) => {
    if (
      typeof room === 'string' &&
      room.startsWith(CHANNEL_PREFIX) &&
      adapter.sids.get(id)?.has(presenceBatchRoom(room))
    )
      void del(id, presenceBatchRoom(room));
    return del(id, room);
  };
  return adapter;
}

/**
 * Counts the events this instance emits (chat_socket_events_emitted_total): every emit to rooms goes
 * through the adapter's `broadcast` once, whatever the number of sockets. The Redis adapter delivers
 * what other instances publish through its parent's method, so each emit is counted where it was made.
 */
export function countingEmits(adapter: Adapter, metrics: Metrics): Adapter {
  const broadcast = adapter.broadcast.bind(adapter);
  adapter.broadcast = (packet: { data?: unknown[] }, opts) => {
    const event = packet.data?.[0];
    metrics.emitted.of(typeof event === 'string' ? event : 'other').inc();
    return broadcast(packet, opts);
  };
  return adapter;
}

/**
 * The adapter's publishing connection. The Redis adapter delivers to this instance's sockets itself and
 * publishes for the others without waiting or handling a refusal (`pubClient.publish(...)` in
 * broadcast, socketsJoin, serverSideEmit...): with Redis away each emit would be an unhandled
 * rejection. Refusals are counted here instead (`link`, which the realtime publisher reads: it publishes
 * the event log's events again when one of its publishes was refused); the local delivery has happened,
 * only the other instances miss that emit.
 */
export function publishingWithoutRejections(
  client: Redis,
  link: FanoutLink,
  onRefused: (err: unknown) => void,
): Redis {
  const publish = client.publish.bind(client);
  const spublish = client.spublish.bind(client);
  client.publish = (channel: string | Buffer, message: string | Buffer): Promise<number> =>
    link.track(publish(channel, message), onRefused);
  // The sharded adapter's (SERVICE_REDIS_ADAPTER=sharded). It delivers to this instance's sockets only
  // once its publish is answered: with Redis away a queued publish would hold every local emit until
  // Redis came back, so it is refused at once instead.
  client.spublish = (channel: string | Buffer, message: string | Buffer): Promise<number> =>
    link.track(
      client.status === 'ready'
        ? (spublish(channel, message) as Promise<number>)
        : Promise.reject(new Error(`Redis is ${client.status}`)),
      onRefused,
    );
  return client;
}

/**
 * Socket.IO with the Redis adapter when REDIS_URL is set (fan-out and room changes reach every
 * instance), the in-memory adapter otherwise; either way with the presence batch rooms above. The Redis
 * adapter is the classic one (every instance reads one channel and drops what is not for its sockets)
 * or, with SERVICE_REDIS_ADAPTER=sharded, the sharded one: Redis 7 sharded pub/sub with a channel per
 * room, each instance subscribed only to the rooms it has sockets in (`dynamic` mode: a socket's own id
 * room uses the main channel).
 * Long-polling clients need sticky sessions across instances; websocket-only clients do not (see README).
 */
export class RealtimeIoAdapter extends IoAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly redis: RedisService,
    private readonly corsOrigins: CorsOrigins,
    private readonly metrics: Metrics,
    private readonly mode: 'classic' | 'sharded' = 'classic',
  ) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions): Server {
    const server = super.createIOServer(port, {
      ...options,
      path: '/socket.io',
      // SERVICE_CORS_ORIGINS, as for REST: CORS headers for long-polling, and an Origin check on every
      // handshake, since browsers apply no CORS to WebSocket. Credentials stay allowed (the origin is
      // reflected when any may connect) so a load balancer's affinity cookie reaches long-polling requests.
      cors: { origin: this.corsOrigins === '*' ? true : [...this.corsOrigins], credentials: true },
      allowRequest: (
        req: IncomingMessage,
        done: (err: string | null | undefined, success: boolean) => void,
      ) => {
        if (socketOriginAllowed(this.corsOrigins, req)) done(null, true);
        else done(`origin ${req.headers.origin} is not allowed (SERVICE_CORS_ORIGINS)`, false);
      },
      pingInterval: 20_000,
      pingTimeout: 20_000,
      maxHttpBufferSize: 256 * 1024,
    }) as Server;
    // socket.io's own in-memory adapter (the class it starts with), or the Redis one
    const InMemory = server.adapter() as typeof Adapter;
    const make = this.redis.enabled ? this.redisAdapter(this.mode) : (nsp: Namespace) => new InMemory(nsp);
    const metrics = this.metrics;
    // socket.io calls `new` on this: a function expression, not an arrow
    server.adapter(function presenceAdapter(nsp: Namespace): Adapter {
      return countingEmits(withPresenceBatchRooms(make(nsp)), metrics);
    });
    return server;
  }

  /**
   * Nest binds `@SubscribeMessage` handlers here, and makes each socket a `disconnect$` observable for
   * them even when there are none. The gateway binds its own listeners (RealtimeGateway), so a socket
   * skips that: no per-socket observables.
   */
  override bindMessageHandlers(...args: Parameters<IoAdapter['bindMessageHandlers']>): void {
    if (args[1].length) super.bindMessageHandlers(...args);
  }

  private redisAdapter(mode: 'classic' | 'sharded'): (nsp: Namespace) => Adapter {
    const link = this.redis.fanout;
    // a publish unanswered for a second (a half-open connection) is refused, not kept waiting
    const pub = publishingWithoutRejections(
      this.redis.duplicate('socket.io-pub', { commandTimeout: 1_000 }),
      link,
      () => this.metrics.fanoutFailures.inc(),
    );
    if (mode === 'classic') {
      const sub = this.redis.duplicate('socket.io-sub');
      link.attach(pub, sub);
      return createAdapter(pub, sub, { key: `${this.redis.prefix}socket.io` });
    }
    // the rooms' subscriptions are made as rooms appear, also while Redis is away: they wait for it (a
    // refused SSUBSCRIBE would leave the room deaf on this instance once Redis is back)
    const sub = this.redis.duplicate('socket.io-sub', { maxRetriesPerRequest: null });
    link.attach(pub, sub);
    return createShardedAdapter(pub, sub, {
      channelPrefix: `${this.redis.prefix}socket.io`,
      subscriptionMode: 'dynamic',
    });
  }
}
