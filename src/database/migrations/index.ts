import { Foundation1763690000000 } from './1763690000000-foundation';
import { Messaging1763690100000 } from './1763690100000-messaging';
import { MessageIndexes1763690150000 } from './1763690150000-message-indexes';
import { Webhooks1763690300000 } from './1763690300000-webhooks';
import { Search1763690400000 } from './1763690400000-search';
import { Attachments1763690500000 } from './1763690500000-attachments';
import { Moderation1763690600000 } from './1763690600000-moderation';
import { WebhookNetworkPolicy1763690700000 } from './1763690700000-webhook-network-policy';
import { ChannelWriteSession1763690800000 } from './1763690800000-channel-write-session';
import { InboxCounters1763690820000 } from './1763690820000-inbox-counters';
import { OrderedMessageIds1763690830000 } from './1763690830000-ordered-message-ids';
import { Threads1763690900000 } from './1763690900000-threads';
import { MessagePins1763690910000 } from './1763690910000-message-pins';
import { ChannelUserState1763690920000 } from './1763690920000-channel-user-state';
import { ChannelControls1763690940000 } from './1763690940000-channel-controls';
import { Bans1763691000000 } from './1763691000000-bans';
import { Flags1763691010000 } from './1763691010000-flags';
import { UserExports1763691020000 } from './1763691020000-user-exports';
import { UserErasure1763691030000 } from './1763691030000-user-erasure';
import { RealtimeCursor1763691040000 } from './1763691040000-realtime-cursor';
import { TypeormMetadata1763691050000 } from './1763691050000-typeorm-metadata';
import { DropApiSecretDigest1763691060000 } from './1763691060000-drop-api-secret-digest';
import { LeanMessageWrites1763691071000 } from './1763691071000-lean-message-writes';
import { SchemaFunctions1763691080000 } from './1763691080000-schema-functions';
import { SearchOffTheSend1763691090000 } from './1763691090000-search-off-the-send';
import { SearchPendingList1763691100000 } from './1763691100000-search-pending-list';
import { LargeChannels1763691110000 } from './1763691110000-large-channels';
import { MembersChangedAt1763691120000 } from './1763691120000-members-changed-at';
import { MarkUnread1763691130000 } from './1763691130000-mark-unread';
import { Drafts1763691140000 } from './1763691140000-drafts';
import { ThreadReadState1763691150000 } from './1763691150000-thread-read-state';
import { DraftReferences1763691160000 } from './1763691160000-draft-references';
import { ThreadUnreadCounts1763691170000 } from './1763691170000-thread-unread-counts';
import { Reminders1763691180000 } from './1763691180000-reminders';
import { ScheduledMessages1763691190000 } from './1763691190000-scheduled-messages';
import { SendWithGivenId1763691200000 } from './1763691200000-send-with-given-id';
import { LinkPreviews1763691210000 } from './1763691210000-link-previews';
import { MessagePreviews1763691220000 } from './1763691220000-message-previews';
import { Polls1763691230000 } from './1763691230000-polls';
import { WorkspaceQuotas1763691240000 } from './1763691240000-workspace-quotas';
import { EventTraceparent1763691250000 } from './1763691250000-event-traceparent';

/** Every migration, in order. Listed explicitly so the same array serves the app, the CLI and tests. */
export const MIGRATIONS = [
  Foundation1763690000000,
  Messaging1763690100000,
  MessageIndexes1763690150000,
  Webhooks1763690300000,
  Search1763690400000,
  Attachments1763690500000,
  Moderation1763690600000,
  WebhookNetworkPolicy1763690700000,
  ChannelWriteSession1763690800000,
  InboxCounters1763690820000,
  OrderedMessageIds1763690830000,
  Threads1763690900000,
  MessagePins1763690910000,
  ChannelUserState1763690920000,
  ChannelControls1763690940000,
  Bans1763691000000,
  Flags1763691010000,
  UserExports1763691020000,
  UserErasure1763691030000,
  RealtimeCursor1763691040000,
  TypeormMetadata1763691050000,
  DropApiSecretDigest1763691060000,
  LeanMessageWrites1763691071000,
  SchemaFunctions1763691080000,
  SearchOffTheSend1763691090000,
  SearchPendingList1763691100000,
  LargeChannels1763691110000,
  MembersChangedAt1763691120000,
  MarkUnread1763691130000,
  Drafts1763691140000,
  ThreadReadState1763691150000,
  DraftReferences1763691160000,
  ThreadUnreadCounts1763691170000,
  Reminders1763691180000,
  ScheduledMessages1763691190000,
  SendWithGivenId1763691200000,
  LinkPreviews1763691210000,
  MessagePreviews1763691220000,
  Polls1763691230000,
  WorkspaceQuotas1763691240000,
  EventTraceparent1763691250000,
];
