import { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Server, ServerOptions } from 'socket.io';
import { RedisService } from '../infra/redis/redis.module';

/**
 * Socket.IO with the Redis adapter when REDIS_URL is set (fan-out and room changes reach every
 * instance), the in-memory adapter otherwise. Long-polling clients need sticky sessions across
 * instances; websocket-only clients do not (see README).
 */
export class RealtimeIoAdapter extends IoAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly redis: RedisService,
  ) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions): Server {
    const server = super.createIOServer(port, {
      ...options,
      path: '/socket.io',
      cors: { origin: true, credentials: true },
      pingInterval: 20_000,
      pingTimeout: 20_000,
      maxHttpBufferSize: 256 * 1024,
    }) as Server;
    if (this.redis.enabled) {
      const pub = this.redis.duplicate('socket.io-pub');
      const sub = this.redis.duplicate('socket.io-sub');
      server.adapter(createAdapter(pub, sub, { key: `${this.redis.prefix}socket.io` }));
    }
    return server;
  }
}
