import type {
  ChannelPayload,
  ChannelStatePayload,
  DomainEventMap,
  DraftDeletedPayload,
  DraftView,
  ThreadReadPayload,
  MarkUnreadPayload,
  MemberChangePayload,
  MessageView,
  PinPayload,
  ReactionPayload,
} from './events';

/**
 * The realtime contract (CONTRACT §11): every server event a socket receives, by name, and its `data`.
 * The service's gateway and publisher can emit only these; the typed client package uses these very
 * types (copied into it with the rest of src/contract/).
 */
export interface ServerEventMap {
  'message.new': MessageView;
  /** An edit, link previews found, a thread root's new counters (`reply_count`, `last_reply_at`, `thread_participants`), or a poll's counts or close (`poll`). */
  'message.updated':
    | DomainEventMap['message.updated']['message']
    | DomainEventMap['thread.updated']['message']
    | DomainEventMap['poll.updated']['message'];
  /** An unsend (the message stays, blanked), or with `removed: true` a message erased outright: drop it. */
  'message.deleted': DomainEventMap['message.deleted']['message'];
  'message.mentioned': DomainEventMap['message.mentioned'];
  'message.pinned': PinPayload;
  'message.unpinned': PinPayload;
  'reaction.add': ReactionPayload['reaction'];
  'reaction.remove': ReactionPayload['reaction'];
  'channel.created': { channel: ChannelPayload };
  'channel.updated': { channel: ChannelPayload };
  'channel.deleted': { channel: ChannelPayload };
  'channel.read': { channel_id: string; user_id: string; external_id: string; last_read_at: string };
  'member.added': MemberChangePayload;
  'member.removed': MemberChangePayload;
  'member.role_changed': DomainEventMap['member.role_changed'];
  /** To the mentioned user's own sockets (no seq). */
  'notification.mention': { message: MessageView };
  /** User-scoped (no seq): the user's own state of a channel changed (CONTRACT §18), to that user's sockets only. */
  'channel.state_changed': ChannelStatePayload;
  /** User-scoped (no seq): the user marked a channel unread from a message on (CONTRACT §22). */
  'notification.mark_unread': MarkUnreadPayload;
  /** User-scoped (no seq): the user read a thread (CONTRACT §23). */
  'notification.thread_read': ThreadReadPayload;
  /** User-scoped (no seq): the user's draft was saved or deleted (CONTRACT §24), on any of their devices. */
  'draft.updated': { draft: DraftView };
  'draft.deleted': DraftDeletedPayload;
  /** User-scoped (no seq): the user's reminder fired (CONTRACT §25). */
  'notification.reminder_due': DomainEventMap['notification.reminder_due'];
  /** User-scoped (no seq): the user's scheduled message was sent (CONTRACT §25). */
  'scheduled.sent': DomainEventMap['scheduled.sent'];
  /** User-scoped (no seq): the user's scheduled message was refused when it fired; it stays listed as failed. */
  'scheduled.failed': DomainEventMap['scheduled.failed'];
  'presence.changed': PresenceChange;
  /** Only to sockets that asked for it (`presence: 'batch'`): a channel's presence changes since the previous batch. */
  'presence.batch': PresenceBatch;
  'typing.start': { user_id: string; external_id: string };
  'typing.stop': { user_id: string; external_id: string };
}

export type ServerEventName = keyof ServerEventMap;

/** Every server event name, at run time; the check below keeps it complete. */
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
  'notification.mark_unread',
  'notification.thread_read',
  'draft.updated',
  'draft.deleted',
  'notification.reminder_due',
  'scheduled.sent',
  'scheduled.failed',
  'presence.changed',
  'presence.batch',
  'typing.start',
  'typing.stop',
] as const satisfies readonly ServerEventName[];
const serverEventsComplete: Exclude<ServerEventName, (typeof SERVER_EVENTS)[number]> extends never
  ? true
  : never = true;
void serverEventsComplete;

/** Events that are not kept in the event log (never replayed by sync): delivered as they come. */
export const EPHEMERAL_EVENTS: readonly ServerEventName[] = [
  'typing.start',
  'typing.stop',
  'presence.changed',
  'presence.batch',
];

/** What a socket receives: channel-scoped events have `channel_id` and a contiguous per-channel `seq`. */
export interface Envelope<K extends ServerEventName = ServerEventName> {
  v: 1;
  type: K;
  channel_id?: string;
  seq?: number;
  data: ServerEventMap[K];
  ts: string;
}

/** Any one envelope, narrowed by `type`. */
export type AnyEnvelope = { [K in ServerEventName]: Envelope<K> }[ServerEventName];

/** What `presence.changed` says about one user. */
export interface PresenceChange {
  external_id: string;
  online: boolean;
  last_seen_at: string | null;
}

/** `presence.batch` data: who came online and who went offline (and when) since the previous batch, by external_id. */
export interface PresenceBatch {
  online: string[];
  offline: { external_id: string; last_seen_at: string }[];
}

/**
 * How a socket wants presence, chosen at the handshake (`auth.presence` or `?presence=`): `each` (the
 * default, `presence.changed` per user), `batch` (`presence.batch` per channel, at most once a second,
 * instead), `none` (no presence events).
 */
export type PresenceMode = 'each' | 'batch' | 'none';

/** What the client sends (each with an acknowledgement callback). */
export const CLIENT_EVENTS = [
  'message.send',
  'channel.delivered',
  'channel.read',
  'typing.start',
  'typing.stop',
  'presence.subscribe',
  'presence.unsubscribe',
] as const;

export type ClientEventName = (typeof CLIENT_EVENTS)[number];
