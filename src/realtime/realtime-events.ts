import type { Server, Socket } from 'socket.io';
import type { ErrorBody } from '../common/errors/app-error';
import type { ChannelPayload, ChannelStatePayload, DomainEventMap, DomainEventType } from '../events/event-types';
import type { MessageView } from '../messages/message-view.service';

/** Every channel-scoped server event is wrapped like this; user-scoped ones carry no seq. */
export interface Envelope<T extends string = string, D = unknown> {
  v: 1;
  type: T;
  channel_id?: string;
  seq?: number;
  data: D;
  ts: string;
}

type Payload<K extends DomainEventType> = DomainEventMap[K];

/** The server → client event map (CONTRACT §11). The gateway and the publisher can only emit these. */
export interface ServerToClientEvents {
  'message.new': (e: Envelope<'message.new', MessageView>) => void;
  /** An edit, or a thread root's new counters (`reply_count`, `last_reply_at`, `thread_participants`). */
  'message.updated': (
    e: Envelope<
      'message.updated',
      Payload<'message.updated'>['message'] | Payload<'thread.updated'>['message']
    >,
  ) => void;
  'message.deleted': (e: Envelope<'message.deleted', Payload<'message.deleted'>['message']>) => void;
  'message.mentioned': (e: Envelope<'message.mentioned', Payload<'message.mentioned'>>) => void;
  'message.pinned': (e: Envelope<'message.pinned', Payload<'message.pinned'>>) => void;
  'message.unpinned': (e: Envelope<'message.unpinned', Payload<'message.unpinned'>>) => void;
  'reaction.add': (e: Envelope<'reaction.add', Payload<'message.reaction.added'>['reaction']>) => void;
  'reaction.remove': (e: Envelope<'reaction.remove', Payload<'message.reaction.removed'>['reaction']>) => void;
  'channel.created': (e: Envelope<'channel.created', { channel: ChannelPayload }>) => void;
  'channel.updated': (e: Envelope<'channel.updated', { channel: ChannelPayload }>) => void;
  'channel.deleted': (e: Envelope<'channel.deleted', { channel: ChannelPayload }>) => void;
  'channel.read': (e: Envelope<'channel.read', { user_id: string; external_id: string; last_read_at: string }>) => void;
  'member.added': (e: Envelope<'member.added', Payload<'member.joined'>>) => void;
  'member.removed': (e: Envelope<'member.removed', Payload<'member.left'>>) => void;
  'member.role_changed': (e: Envelope<'member.role_changed', Payload<'member.role_changed'>>) => void;
  'notification.mention': (e: Envelope<'notification.mention', { message: MessageView }>) => void;
  /** User-scoped (no seq): the caller's own state of a channel changed (CONTRACT §18), to that user's sockets only. */
  'channel.state_changed': (e: Envelope<'channel.state_changed', ChannelStatePayload>) => void;
  'presence.changed': (e: Envelope<'presence.changed', PresenceChange>) => void;
  /** Only to sockets that asked for it (`auth.presence: 'batch'`): a channel's presence changes since the previous batch. */
  'presence.batch': (e: Envelope<'presence.batch', PresenceBatch>) => void;
  'typing.start': (e: Envelope<'typing.start', { user_id: string; external_id: string }>) => void;
  'typing.stop': (e: Envelope<'typing.stop', { user_id: string; external_id: string }>) => void;
}

export type ServerEventName = keyof ServerToClientEvents;

/** Every server event name, at run time (metrics label values); the check below keeps it complete. */
export const SERVER_EVENTS = [
  'message.new',
  'message.updated',
  'message.deleted',
  'message.mentioned',
  'message.pinned',
  'message.unpinned',
  'reaction.add',
  'reaction.remove',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'channel.read',
  'member.added',
  'member.removed',
  'member.role_changed',
  'notification.mention',
  'channel.state_changed',
  'presence.changed',
  'presence.batch',
  'typing.start',
  'typing.stop',
] as const satisfies readonly ServerEventName[];
const serverEventsComplete: Exclude<ServerEventName, (typeof SERVER_EVENTS)[number]> extends never ? true : never = true;
void serverEventsComplete;

/** What `presence.changed` says about one user (CONTRACT §11). */
export interface PresenceChange {
  external_id: string;
  online: boolean;
  last_seen_at: string | null;
}

/** `presence.batch` data: who came online and who went offline (and when) since the previous batch (each user's last state), by external_id. */
export interface PresenceBatch {
  online: string[];
  offline: { external_id: string; last_seen_at: string }[];
}

/**
 * How a socket wants presence, chosen at the handshake (`auth.presence` or `?presence=`):
 * `each` (the default, the contract's `presence.changed` per user), `batch` (`presence.batch` per
 * channel, at most once a second, instead), `none` (no presence events; GET /v1/channels/:id/presence still works).
 */
export type PresenceMode = 'each' | 'batch' | 'none';

export type Ack = { ok: true; data: unknown } | { ok: false; error: Omit<ErrorBody, 'request_id'> };

export interface ClientToServerEvents {
  'message.send': (payload: unknown, ack?: (a: Ack) => void) => void;
  'channel.delivered': (payload: unknown, ack?: (a: Ack) => void) => void;
  'channel.read': (payload: unknown, ack?: (a: Ack) => void) => void;
  'typing.start': (payload: unknown, ack?: (a: Ack) => void) => void;
  'typing.stop': (payload: unknown, ack?: (a: Ack) => void) => void;
  'presence.subscribe': (payload: unknown, ack?: (a: Ack) => void) => void;
  'presence.unsubscribe': (payload: unknown, ack?: (a: Ack) => void) => void;
}

/** Every client event name, at run time (metrics label values); the check below keeps it complete. */
export const CLIENT_EVENTS = [
  'message.send',
  'channel.delivered',
  'channel.read',
  'typing.start',
  'typing.stop',
  'presence.subscribe',
  'presence.unsubscribe',
] as const satisfies readonly (keyof ClientToServerEvents)[];
const clientEventsComplete: Exclude<keyof ClientToServerEvents, (typeof CLIENT_EVENTS)[number]> extends never ? true : never = true;
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

export type AppServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type AppSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

/** Domain event type → the realtime event a channel's members receive (none for webhook-only ones). */
export const REALTIME_NAME: Partial<Record<DomainEventType, ServerEventName>> = {
  'message.created': 'message.new',
  'message.updated': 'message.updated',
  'thread.updated': 'message.updated',
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
};

/**
 * A workspace event (no channel) with a realtime name goes to its audience's own sockets (their
 * `user:<id>` rooms) and nobody else's: the user-scoped events that are kept in the log.
 */
export function isUserScoped(e: { channel_id: string | null; audience: string[] | null; type: DomainEventType }): boolean {
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
