import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayDisconnect, OnGatewayInit, WebSocketGateway, WebSocketServer } from '@nestjs/websockets';
import { plainToInstance } from 'class-transformer';
import { IsString, MaxLength, MinLength, validate } from 'class-validator';
import type { Server, Socket } from 'socket.io';
import { DataSource } from 'typeorm';
import { CredentialsService } from '../auth/credentials.service';
import { ChannelAccess } from '../channels/channel-access.service';
import type { UserPrincipal } from '../common/auth/principal';
import { AppError, errorBody } from '../common/errors/app-error';
import { toAppError } from '../common/errors/to-app-error';
import { validationErrorFrom } from '../common/errors/validation';
import { SendMessageDto } from '../messages/dto/send-message.dto';
import { MessagesService } from '../messages/messages.service';
import { ReceiptsService } from '../receipts/receipts.service';
import { rows } from '../infra/database/sql';
import { PresenceStore } from './presence.store';
import {
  Ack,
  channelRoom,
  ClientToServerEvents,
  ServerToClientEvents,
  SocketData,
  userRoom,
} from './realtime-events';

type AppServer = Server<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;
type AppSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;

class ChannelRefDto {
  @IsString() @MinLength(1) @MaxLength(200) channel_id!: string;
}

class SocketSendDto extends SendMessageDto {
  @IsString() @MinLength(1) @MaxLength(200) channel_id!: string;
}

const TYPING_TTL_MS = 6_000;

async function parse<T extends object>(cls: new () => T, payload: unknown): Promise<T> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new AppError('VALIDATION_ERROR', 'The payload must be an object');
  }
  const dto = plainToInstance(cls, payload);
  const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length) throw validationErrorFrom(errors);
  return dto;
}

/**
 * The Socket.IO endpoint. Handshake: a user JWT in `auth.token` or `?token=`. Each socket joins
 * `user:<id>` and `channel:<id>` for each membership; the publisher moves sockets when memberships
 * change. Inbound events share the REST services, so rules, errors and idempotency are the same.
 */
@WebSocketGateway()
export class RealtimeGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect, BeforeApplicationShutdown {
  @WebSocketServer() server!: AppServer;
  private readonly logger = new Logger('Realtime');
  private readonly typing = new Map<string, NodeJS.Timeout>();
  private closing = false;

  constructor(
    private readonly credentials: CredentialsService,
    private readonly db: DataSource,
    private readonly presence: PresenceStore,
    private readonly messages: MessagesService,
    private readonly receipts: ReceiptsService,
    private readonly access: ChannelAccess,
  ) {}

  afterInit(server: AppServer): void {
    server.use((socket, next) => {
      const auth = socket.handshake.auth as { token?: unknown };
      const query = socket.handshake.query.token;
      const token = typeof auth?.token === 'string' ? auth.token : typeof query === 'string' ? query : undefined;
      const fail = (e: unknown) => {
        const { error } = toAppError(e);
        const err = new Error(error.message) as Error & { data: unknown };
        err.data = errorBody(error.code === 'UNAVAILABLE' ? error : new AppError('UNAUTHORIZED', error.message));
        next(err);
      };
      if (!token) return fail(new AppError('UNAUTHORIZED', 'Missing token: connect with auth.token'));
      this.credentials
        .userToken(token)
        .then((p) => {
          socket.data = { workspaceId: p.workspaceId, userId: p.userId, externalId: p.externalId };
          next();
        })
        .catch(fail);
    });
  }

  async handleConnection(socket: AppSocket): Promise<void> {
    const { userId } = socket.data;
    if (!userId) return;
    // the user room first and at once: membership changes published from now on reach this socket;
    // handlers are bound at once too and wait for the channel rooms before running
    void socket.join(userRoom(userId));
    const ready = this.joinChannels(socket);
    this.bindHandlers(socket, ready);
    try {
      await ready;
      if (await this.presence.connected(userId)) await this.announcePresence(socket.data, true, null);
    } catch (e) {
      this.logger.warn(`connection setup failed: ${String(e)}`);
      socket.disconnect(true);
    }
  }

  private async joinChannels(socket: AppSocket): Promise<void> {
    const rows: { channel_id: string }[] = await this.db.query(`SELECT channel_id FROM channel_members WHERE user_id = $1`, [socket.data.userId]);
    await socket.join(rows.map((r) => channelRoom(r.channel_id)));
  }

  /** Sockets close with the server: no presence broadcasts then (Redis is about to close too). */
  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const t of this.typing.values()) clearTimeout(t);
    this.typing.clear();
  }

  async handleDisconnect(socket: AppSocket): Promise<void> {
    const { userId } = socket.data ?? {};
    if (!userId || this.closing) return;
    try {
      // last_seen_at first: whoever sees the user offline then also sees when it was last seen
      let seenAt: Date | undefined;
      if (this.presence.localCount(userId) <= 1) {
        const seen = await rows<{ last_seen_at: Date }>(this.db.manager, `UPDATE users SET last_seen_at = now() WHERE id = $1 RETURNING last_seen_at`, [userId]);
        seenAt = seen[0]?.last_seen_at;
      }
      const lastHere = await this.presence.disconnected(userId);
      if (!lastHere || (await this.presence.onlineOf([userId])).has(userId)) return;
      await this.announcePresence(socket.data, false, (seenAt ?? new Date()).toISOString());
    } catch (e) {
      // shutting down, or the database is away: presence heals on the next connection
      this.logger.debug(`disconnect bookkeeping failed: ${String(e)}`);
    }
  }

  private async announcePresence(who: SocketData, online: boolean, lastSeenAt: string | null): Promise<void> {
    const rows: { channel_id: string }[] = await this.db.query(`SELECT channel_id FROM channel_members WHERE user_id = $1`, [who.userId]);
    if (!rows.length) return;
    this.server
      .to(rows.map((r) => channelRoom(r.channel_id)))
      .except(userRoom(who.userId))
      .emit('presence.changed', {
        v: 1,
        type: 'presence.changed',
        data: { external_id: who.externalId, online, last_seen_at: lastSeenAt },
        ts: new Date().toISOString(),
      });
  }

  private principal(socket: AppSocket): UserPrincipal {
    return { kind: 'user', ...socket.data };
  }

  /** Runs a handler and answers the acknowledgement `{ok, data}` / `{ok: false, error}`. */
  private handle(ready: Promise<void>, fn: (payload: unknown) => Promise<unknown>) {
    return (payload: unknown, ack?: (a: Ack) => void) => {
      ready
        .then(() => fn(payload))
        .then((data) => ack?.({ ok: true, data: data ?? null }))
        .catch((e: unknown) => {
          const { error, unexpected } = toAppError(e);
          if (unexpected) this.logger.error({ err: e }, 'socket handler failed');
          ack?.({ ok: false, error: errorBody(error).error });
        });
    };
  }

  private bindHandlers(socket: AppSocket, ready: Promise<void>): void {
    socket.on(
      'message.send',
      this.handle(ready, async (payload) => {
        const dto = await parse(SocketSendDto, payload);
        const { channel_id, ...body } = dto;
        const result = await this.messages.send(this.principal(socket), channel_id, Object.assign(new SendMessageDto(), body));
        return result.message;
      }),
    );
    socket.on(
      'channel.delivered',
      this.handle(ready, async (payload) => this.receipts.markDelivered(this.principal(socket), (await parse(ChannelRefDto, payload)).channel_id)),
    );
    socket.on(
      'channel.read',
      this.handle(ready, async (payload) => this.receipts.markRead(this.principal(socket), (await parse(ChannelRefDto, payload)).channel_id)),
    );
    socket.on('typing.start', this.handle(ready, async (payload) => this.typingEvent(socket, payload, true)));
    socket.on('typing.stop', this.handle(ready, async (payload) => this.typingEvent(socket, payload, false)));
  }

  /** Typing is not logged: it goes to the other members now and stops by itself after a few seconds. */
  private async typingEvent(socket: AppSocket, payload: unknown, start: boolean): Promise<{ channel_id: string }> {
    const { channel_id: ref } = await parse(ChannelRefDto, payload);
    const { channel } = await this.access.open(this.principal(socket), ref);
    const { userId, externalId } = socket.data;
    const key = `${channel.id}:${userId}`;
    const emit = (type: 'typing.start' | 'typing.stop') => {
      const env = { v: 1 as const, type, channel_id: channel.id, data: { user_id: userId, external_id: externalId }, ts: new Date().toISOString() };
      const to = this.server.to(channelRoom(channel.id)).except(userRoom(userId));
      if (type === 'typing.start') to.emit('typing.start', { ...env, type });
      else to.emit('typing.stop', { ...env, type });
    };
    clearTimeout(this.typing.get(key));
    this.typing.delete(key);
    if (start) {
      const timer = setTimeout(() => {
        this.typing.delete(key);
        emit('typing.stop');
      }, TYPING_TTL_MS);
      timer.unref();
      this.typing.set(key, timer);
    }
    emit(start ? 'typing.start' : 'typing.stop');
    return { channel_id: channel.id };
  }
}
