import type { BroadcastOperator, Server, Socket } from 'socket.io';
import type { ErrorBody } from '../common/errors/app-error';
import type { DomainEventType } from '../contract/events';
import type {
  AnyEnvelope,
  ClientEventName,
  Envelope,
  PresenceChange,
  PresenceMode,
  ServerEventName,
} from '../contract/realtime';

/** The server → client events (CONTRACT §11): one listener per name of the realtime contract. */
export type ServerToClientEvents = { [K in ServerEventName]: (e: Envelope<K>) => void };

export type Ack = { ok: true; data: unknown } | { ok: false; error: Omit<ErrorBody, 'request_id'> };

export interface ClientToServerEvents extends Record<
  ClientEventName,
  (payload: unknown, ack?: (a: Ack) => void) => void
> {
  'message.send': (payload: unknown, ack?: (a: Ack) => void) => void;
  'channel.delivered': (payload: unknown, ack?: (a: Ack) => void) => void;
  'channel.read': (payload: unknown, ack?: (a: Ack) => void) => void;
  'typing.start': (payload: unknown, ack?: (a: Ack) => void) => void;
  'typing.stop': (payload: unknown, ack?: (a: Ack) => void) => void;
  'presence.subscribe': (payload: unknown, ack?: (a: Ack) => void) => void;
  'presence.unsubscribe': (payload: unknown, ack?: (a: Ack) => void) => void;
}

const clientEventsComplete: Exclude<keyof ClientToServerEvents, ClientEventName> extends never
  ? true
  : never = true;
void clientEventsComplete;

export interface SocketData {
  workspaceId: string;
  userId: string;
  externalId: string;
}

/** One instance's presence announcements of one tick, for every instance to deliver to its own sockets. */
export interface PresenceNews {
  ts: string;
  changes: { user_id: string; rooms: string[]; change: PresenceChange }[];
}

/** Between instances (Socket.IO serverSideEmit, through the Redis adapter). */
export interface InterServerEvents {
  'presence.news': (news: PresenceNews) => void;
}

/**
 * Emits an envelope of any type to a broadcast target. Socket.IO's typed `emit` takes a name and that
 * name's arguments; an envelope is both, so the name is read from it.
 */
export function send(target: BroadcastOperator<ServerToClientEvents, SocketData>, env: AnyEnvelope): void {
  (target.emit as (name: ServerEventName, e: AnyEnvelope) => boolean)(env.type, env);
}

export type AppServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type AppSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

/** Domain event type → the realtime event a channel's members receive (none for webhook-only ones). */
export const REALTIME_NAME: Partial<Record<DomainEventType, ServerEventName>> = {
  'message.created': 'message.new',
  'message.updated': 'message.updated',
  'thread.updated': 'message.updated',
  'poll.updated': 'message.updated',
  'message.deleted': 'message.deleted',
  'message.mentioned': 'message.mentioned',
  'message.pinned': 'message.pinned',
  'message.unpinned': 'message.unpinned',
  'message.reaction.added': 'reaction.add',
  'message.reaction.removed': 'reaction.remove',
  'channel.created': 'channel.created',
  'channel.updated': 'channel.updated',
  'channel.deleted': 'channel.deleted',
  'channel.read': 'channel.read',
  'member.joined': 'member.added',
  'member.left': 'member.removed',
  'member.role_changed': 'member.role_changed',
  'channel.state_changed': 'channel.state_changed',
  'notification.mark_unread': 'notification.mark_unread',
  'notification.thread_read': 'notification.thread_read',
  'draft.updated': 'draft.updated',
  'draft.deleted': 'draft.deleted',
  'notification.reminder_due': 'notification.reminder_due',
  'scheduled.sent': 'scheduled.sent',
  'scheduled.failed': 'scheduled.failed',
};

/**
 * A workspace event (no channel) with a realtime name goes to its audience's own sockets (their
 * `user:<id>` rooms) and nobody else's: the user-scoped events that are kept in the log.
 */
export function isUserScoped(e: {
  channel_id: string | null;
  audience: string[] | null;
  type: DomainEventType;
}): boolean {
  return !e.channel_id && !!e.audience?.length && REALTIME_NAME[e.type] !== undefined;
}

export const userRoom = (userId: string) => `user:${userId}`;
export const channelRoom = (channelId: string) => `channel:${channelId}`;
/** Sockets that asked for `batch` or `none` are in one of these, so `presence.changed` can leave them out. */
export const presenceRoom = (mode: Exclude<PresenceMode, 'each'>) => `presence:${mode}`;
/**
 * The `batch` sockets of a channel room: the adapter keeps a `batch` socket in `presence-batch:<room>`
 * for every `channel:<id>` room it is in (RealtimeIoAdapter), so a batch reaches exactly them.
 */
export const presenceBatchRoom = (room: string) => `presence-batch:${room}`;
/**
 * The sockets subscribed to a user's presence (CONTRACT §29, `presence.subscribe`): `each` sockets in
 * the first room, `batch` and `none` sockets in the second (they get no presence.changed through their
 * channels, so what they subscribed to reaches them on its own).
 */
export const presenceSubRoom = (userId: string, mode: PresenceMode) =>
  mode === 'each' ? `presence-of:${userId}` : `presence-of-x:${userId}`;
