export { ChatClient } from './client.js';
export type {
  ChatClientOptions,
  SendMessageInput,
  SendOptions,
  SendRetryOptions,
  PresenceState,
  ListMyChannelsQuery,
  ListMessagesQuery,
  ListRepliesQuery,
  ListPollVotesQuery,
  ListPinsQuery,
  SearchMessagesQuery,
  SearchChannelMessagesQuery,
  ListChannelEventsQuery,
  SyncQuery,
  GetPresenceQuery,
} from './client.js';
export { ChatApiError, isChatApiError } from './errors.js';
export type { ChatErrorCode } from './errors.js';
export { SERVER_EVENT_NAMES } from './events.js';
export type * from './events.js';
export type { EventHandler, AnyEventHandler, PresenceMode } from './realtime.js';
export { Sequencer } from './sequencer.js';
export type { Decision, EventSource } from './sequencer.js';
export { jwtExpiry } from './token.js';
export type { TokenProvider, TokenSource } from './token.js';
/** The REST types, generated from the service's OpenAPI document. */
export type * from './generated/types.gen.js';
