import type { Mention, Message, UserRef } from './generated/types.gen.js';

/**
 * The service's realtime event map, mirrored by hand from its server → client map (the OpenAPI document
 * does not describe sockets). test/client/event-map.e2e-spec.ts fails when the two drift apart.
 */
/** The channel object as channel events carry it. */
export interface ChannelPayload {
  id: string;
  type: 'direct' | 'group';
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  member_count: number;
  /** More members than the workspace's large_channel_threshold (presence, receipts, typing and member events change). */
  large: boolean;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  frozen: boolean;
  slow_mode_seconds: number;
  metadata: Record<string, unknown>;
  members: { external_id: string; role: 'admin' | 'member' | null; joined_at: string }[];
}

export interface MemberChangePayload {
  channel_id: string;
  channel_external_id: string;
  user_id: string;
  external_id: string;
}

/** An edit: the message's new content. */
export interface MessageEditPayload {
  id: string;
  channel_id: string;
  channel_external_id: string;
  content: string;
  metadata: Record<string, unknown>;
  edited_at: string;
}

/** A thread root's new counters (a reply came, or one was unsent). */
export interface ThreadCountersPayload {
  id: string;
  channel_id: string;
  channel_external_id: string;
  reply_count: number;
  last_reply_at: string | null;
  thread_participants: UserRef[];
}

/** An unsend (the message stays, blanked), or with `removed: true` a message erased outright: drop it. */
export interface MessageDeletedPayload {
  id: string;
  channel_id: string;
  channel_external_id: string;
  deleted_at: string;
  removed?: true;
}

export interface ReactionPayload {
  message_id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string;
  emoji: string;
}

export interface ChannelStatePayload {
  channel_id: string;
  /** "forever", a time while the mute lasts, or null */
  muted_until: string | null;
  hidden: boolean;
  archived: boolean;
}

export interface PresenceChange {
  external_id: string;
  online: boolean;
  last_seen_at: string | null;
}

export interface PresenceBatch {
  online: string[];
  offline: { external_id: string; last_seen_at: string }[];
}

/** Every server event name and its `data`. */
export interface ServerEventMap {
  'message.new': Message;
  /** An edit, or a thread root's new counters. */
  'message.updated': MessageEditPayload | ThreadCountersPayload;
  'message.deleted': MessageDeletedPayload;
  'message.mentioned': {
    message_id: string;
    channel_id: string;
    channel_external_id: string;
    by_user: UserRef | null;
    mentions: Mention[];
  };
  'message.pinned': { message: Message };
  'message.unpinned': { message: Message };
  'reaction.add': ReactionPayload;
  'reaction.remove': ReactionPayload;
  'channel.created': { channel: ChannelPayload };
  'channel.updated': { channel: ChannelPayload };
  'channel.deleted': { channel: ChannelPayload };
  'channel.read': { user_id: string; external_id: string; last_read_at: string };
  'member.added': MemberChangePayload;
  'member.removed': MemberChangePayload;
  'member.role_changed': MemberChangePayload & { role: 'admin' | 'member' };
  /** To the mentioned user's own sockets (no seq). */
  'notification.mention': { message: Message };
  /** To the caller's own sockets (no seq): its own state of a channel changed. */
  'channel.state_changed': ChannelStatePayload;
  'presence.changed': PresenceChange;
  /** Only with `presence: 'batch'`: a channel's presence changes since the previous batch. */
  'presence.batch': PresenceBatch;
  'typing.start': { user_id: string; external_id: string };
  'typing.stop': { user_id: string; external_id: string };
}

export type ServerEventName = keyof ServerEventMap;

/** Every server event name at run time. */
export const SERVER_EVENT_NAMES = [
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

/** What the socket carries: channel-scoped events have `channel_id` and a contiguous per-channel `seq`. */
export interface Envelope<K extends ServerEventName = ServerEventName> {
  v: 1;
  type: K;
  channel_id?: string;
  seq?: number;
  data: ServerEventMap[K];
  ts: string;
}

/** Any one event, narrowed by `type`. */
export type AnyEnvelope = { [K in ServerEventName]: Envelope<K> }[ServerEventName];

/** Events that are not kept in the service's event log (never replayed by sync): delivered as they come. */
export const EPHEMERAL_EVENTS: ReadonlySet<string> = new Set([
  'typing.start',
  'typing.stop',
  'presence.changed',
  'presence.batch',
]);

/** The client's own connection states. */
export type ConnectionStatus = 'disconnected' | 'connecting' | 'syncing' | 'connected';

/** Why the client asks the application to reload what it shows from history. */
export interface ResetInfo {
  /** `retention`: the client was away longer than the service keeps events; `channel` : one channel's events could not be read. */
  reason: 'retention' | 'channel';
  channel_id?: string;
}
