import { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import type { IncomingMessage } from 'http';
import type { Namespace, Server, ServerOptions } from 'socket.io';
import type { Adapter, Room, SocketId } from 'socket.io-adapter';
import { CorsOrigins, socketOriginAllowed } from '../common/http/cors';
import { RedisService } from '../infra/redis/redis.module';
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
    for (const r of rooms) if (typeof r === 'string' && r.startsWith(CHANNEL_PREFIX)) all.add(presenceBatchRoom(r));
    return addAll(id, all);
  };
  adapter.del = (id: SocketId, room: Room) => {
    if (typeof room === 'string' && room.startsWith(CHANNEL_PREFIX) && adapter.sids.get(id)?.has(presenceBatchRoom(room))) void del(id, presenceBatchRoom(room));
    return del(id, room);
  };
  return adapter;
}

/**
 * Socket.IO with the Redis adapter when REDIS_URL is set (fan-out and room changes reach every
 * instance), the in-memory adapter otherwise; either way with the presence batch rooms above.
 * Long-polling clients need sticky sessions across instances; websocket-only clients do not (see README).
 */
export class RealtimeIoAdapter extends IoAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly redis: RedisService,
    private readonly corsOrigins: CorsOrigins,
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
      allowRequest: (req: IncomingMessage, done: (err: string | null | undefined, success: boolean) => void) => {
        if (socketOriginAllowed(this.corsOrigins, req)) done(null, true);
        else done(`origin ${req.headers.origin} is not allowed (SERVICE_CORS_ORIGINS)`, false);
      },
      pingInterval: 20_000,
      pingTimeout: 20_000,
      maxHttpBufferSize: 256 * 1024,
    }) as Server;
    // socket.io's own in-memory adapter (the class it starts with), or the Redis one
    const InMemory = server.adapter() as typeof Adapter;
    const make = this.redis.enabled
      ? createAdapter(this.redis.duplicate('socket.io-pub'), this.redis.duplicate('socket.io-sub'), { key: `${this.redis.prefix}socket.io` })
      : (nsp: Namespace) => new InMemory(nsp);
    // socket.io calls `new` on this: a function expression, not an arrow
    server.adapter(function presenceAdapter(nsp: Namespace): Adapter {
      return withPresenceBatchRooms(make(nsp));
    });
    return server;
  }
}
