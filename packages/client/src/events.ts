import { EPHEMERAL_EVENTS as EPHEMERAL, SERVER_EVENTS } from './generated/contract/realtime.js';
import type { DomainEventMap } from './generated/contract/events.js';
import type { ServerEventMap } from './generated/contract/realtime.js';

/**
 * The realtime events are the service's own event contract (src/contract/ in the service's repository),
 * imported from the copy scripts/generate-types.js keeps in src/generated/contract/ (test/client checks
 * that it is current): one definition for the service's publisher and this client.
 */
export type {
  AnyEnvelope,
  Envelope,
  PresenceBatch,
  PresenceChange,
  ServerEventMap,
  ServerEventName,
} from './generated/contract/realtime.js';
export type {
  BanPayload,
  ChannelPayload,
  ChannelStatePayload,
  MemberChangePayload,
  MessageView,
  PinPayload,
  ThreadCounters,
  UserPayload,
} from './generated/contract/events.js';

/** An edit: the message's new content. */
export type MessageEditPayload = DomainEventMap['message.updated']['message'];
/** A thread root's new counters (a reply came, or one was unsent). */
export type ThreadCountersPayload = DomainEventMap['thread.updated']['message'];
/** An unsend (the message stays, blanked), or with `removed: true` a message erased outright: drop it. */
export type MessageDeletedPayload = ServerEventMap['message.deleted'];
/** A reaction added or removed. */
export type ReactionPayload = ServerEventMap['reaction.add'];

/** Every server event name at run time. */
export const SERVER_EVENT_NAMES = SERVER_EVENTS;

/** Events that are not kept in the service's event log (never replayed by sync): delivered as they come. */
export const EPHEMERAL_EVENTS: ReadonlySet<string> = new Set(EPHEMERAL);

/** The client's own connection states. */
export type ConnectionStatus = 'disconnected' | 'connecting' | 'syncing' | 'connected';

/** Why the client asks the application to reload what it shows from history. */
export interface ResetInfo {
  /** `retention`: the client was away longer than the service keeps events; `channel` : one channel's events could not be read. */
  reason: 'retention' | 'channel';
  channel_id?: string;
}
