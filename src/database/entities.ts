import { AttachmentUpload } from '../attachments/attachment-upload.entity';
import { Ban } from '../bans/ban.entity';
import { Block } from '../blocks/block.entity';
import { ChannelMember } from '../channels/channel-member.entity';
import { Channel } from '../channels/channel.entity';
import { Draft } from '../drafts/draft.entity';
import { Reminder } from '../reminders/reminder.entity';
import { Poll, PollOption, PollVote } from '../polls/poll.entity';
import { ScheduledMessage } from '../scheduled/scheduled-message.entity';
import { LinkPreview } from '../previews/link-preview.entity';
import { UserErasure } from '../erasure/user-erasure.entity';
import { EventLogEntry } from '../events/event-log-entry.entity';
import { EventRelayCursor } from '../events/event-relay-cursor.entity';
import { UserExport } from '../exports/user-export.entity';
import { FlagReview } from '../flags/flag-review.entity';
import { Flag } from '../flags/flag.entity';
import { MessageGap } from '../messages/message-gap.entity';
import { MessageMention } from '../messages/message-mention.entity';
import { MessageThreadGap } from '../messages/message-thread-gap.entity';
import { MessageThread } from '../messages/message-thread.entity';
import { ThreadRead } from '../messages/thread-read.entity';
import { Message } from '../messages/message.entity';
import { ModerationAudit } from '../moderation/moderation-audit.entity';
import { Mute } from '../mutes/mute.entity';
import { MessagePin } from '../pins/message-pin.entity';
import { Device } from '../push/device.entity';
import { Reaction } from '../reactions/reaction.entity';
import { MessageSearch } from '../search/message-search.entity';
import { User } from '../users/user.entity';
import { WebhookAttempt } from '../webhooks/webhook-attempt.entity';
import { WebhookDelivery } from '../webhooks/webhook-delivery.entity';
import { Webhook } from '../webhooks/webhook.entity';
import { WorkspaceKey } from '../workspaces/workspace-key.entity';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * One entity per table, each in the feature folder that owns the table. The migrations remain the
 * schema's history and hold what entities cannot state (PL/pgSQL functions, the generated search
 * column's function, descending, INCLUDE, GIN and NULLS NOT DISTINCT indexes: `synchronize: false`);
 * `npm run check:schema` proves the two agree. Hot paths keep their hand-written SQL through an
 * EntityManager (keyset pages, ON CONFLICT, xmax, xid8 cursors); plain CRUD may use repositories.
 */
export const ENTITIES = [
  Workspace,
  WorkspaceKey,
  User,
  EventLogEntry,
  EventRelayCursor,
  Channel,
  ChannelMember,
  Message,
  MessageMention,
  MessageThread,
  MessageGap,
  MessageSearch,
  MessagePin,
  Reaction,
  Block,
  Mute,
  Ban,
  Flag,
  FlagReview,
  ModerationAudit,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  AttachmentUpload,
  Device,
  UserExport,
  UserErasure,
  Draft,
  Reminder,
  ScheduledMessage,
  LinkPreview,
  Poll,
  PollOption,
  PollVote,
  ThreadRead,
  MessageThreadGap,
];
