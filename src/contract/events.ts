/**
 * The event contract: what the service stores in its event log and sends to the outside, by event
 * name: the payload of each domain event (the log, webhooks' `data`, sync), and the message object
 * as clients see it (CONTRACT §7). Self-contained (it imports nothing), so the typed client package
 * uses these very types (packages/client/scripts/generate-types.js copies the folder into it).
 */

/** CONTRACT §9: what a presign recorded about an uploaded file. */
export interface AttachmentView {
  url: string;
  mime_type: string;
  size_bytes: number;
  filename: string;
}

export interface MessageUserView {
  id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
}

export interface ReactionView {
  emoji: string;
  count: number;
  reacted_by_me: boolean;
}

export type MessageType = 'text' | 'image' | 'file' | 'system' | 'poll';

/** CONTRACT §28: a poll option and its votes. */
export interface PollOptionView {
  id: string;
  text: string;
  vote_count: number;
}

/** CONTRACT §28: the poll of a message of type `poll`. */
export interface PollView {
  id: string;
  question: string;
  options: PollOptionView[];
  /** Votes cast (the sum of the options' vote_count). */
  total_votes: number;
  /** Users with a vote. */
  voter_count: number;
  multiple_choice: boolean;
  anonymous: boolean;
  closes_at: string | null;
  closed: boolean;
  closed_at: string | null;
  /** Null once that user is gone. */
  created_by: UserRef | null;
  /** The options the viewing user chose: in answers to a user token; [] for a backend key; absent in broadcasts and webhooks. */
  my_votes?: string[];
}
export type ReceiptStatus = 'sent' | 'delivered' | 'read';

/** CONTRACT §26: a link's preview; `url` as the message's content writes it. */
export interface LinkPreview {
  url: string;
  title: string;
  description: string | null;
  image_url: string | null;
  site_name: string | null;
}

/** CONTRACT §28's webhook `poll.closed`. */
export interface PollClosedPayload {
  poll_id: string;
  message_id: string;
  channel_id: string;
  channel_external_id: string;
  poll: PollView;
}

/** CONTRACT §28's webhook `poll.voted`: who (null in an anonymous poll) and their options after the change ([] withdrawn). */
export interface PollVotedPayload extends PollClosedPayload {
  user: UserRef | null;
  option_ids: string[];
}

/** The message object of CONTRACT §7, as one viewer sees it. */
export interface MessageView {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  user: MessageUserView | null;
  content: string;
  type: MessageType;
  attachment_url: string | null;
  attachment: AttachmentView | null;
  /** CONTRACT §17: custom data, {} when none (and once unsent). */
  metadata: Record<string, unknown>;
  parent_id?: string;
  quoted_message?: QuotedMessagePayload;
  mentions?: MentionRef[];
  /** On thread replies (CONTRACT §15): the root, and whether the reply is also in the channel. */
  thread_id?: string;
  show_in_channel?: boolean;
  /** On every other message (any can be a root): its thread's counters. */
  reply_count?: number;
  last_reply_at?: string | null;
  thread_participants?: UserRef[];
  /** CONTRACT §23: the viewing user's read state of the thread, on every non-reply message shown to a user (never to a backend key, in broadcasts or webhooks). */
  thread?: ThreadReadState;
  reactions: ReactionView[];
  /** CONTRACT §26: previews of the links in the content, in their order there ([] until the worker found some, and once unsent). */
  previews: LinkPreview[];
  /** CONTRACT §28: on a message of type `poll`: its poll (null once unsent). */
  poll?: PollView | null;
  /** CONTRACT §16: when the message was pinned; null when it is not pinned. */
  pinned_at: string | null;
  /** Who pinned it: null when it is not pinned, or when a backend key (or a since deleted user) pinned it. */
  pinned_by: UserRef | null;
  /** CONTRACT §19: sent while its author was shadow-banned; shown only to a backend key (others never see the message). */
  shadowed?: true;
  receipt_status: ReceiptStatus;
  created_at: string;
  edited_at: string | null;
  deleted_at: string | null;
}

export interface UserPayload {
  id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface UserRef {
  id: string;
  external_id: string;
  name: string | null;
}

export interface MentionRef {
  user_id: string;
  external_id: string;
  name: string | null;
}

/** A thread root's counters (CONTRACT §15), as every root carries them. */
export interface ThreadCounters {
  reply_count: number;
  last_reply_at: string | null;
  thread_participants: UserRef[];
}

/** CONTRACT §19's `user.banned` / `user.unbanned` data. */
export interface BanPayload {
  user: UserRef;
  channel_id: string | null;
  reason: string | null;
  expires_at: string | null;
  shadow: boolean;
}

export interface QuotedMessagePayload {
  id: string;
  user_id: string | null;
  user_name: string | null;
  content: string;
  type: string;
  deleted: boolean;
}

/** The channel object of CONTRACT §6. */
export interface ChannelPayload {
  id: string;
  type: 'direct' | 'group';
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  member_count: number;
  /** CONTRACT §29: more members than the workspace's large_channel_threshold. */
  large: boolean;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** CONTRACT §17. */
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

/**
 * CONTRACT §16: `message.pinned` / `message.unpinned` carry the message as it was rendered in the
 * transaction that pinned or unpinned it, without a viewer (`reacted_by_me` false).
 */
export interface PinPayload {
  message: MessageView;
}

export interface ReactionPayload {
  reaction: {
    message_id: string;
    channel_id: string;
    channel_external_id: string;
    user_id: string;
    emoji: string;
  };
}

/** CONTRACT §23: a user's read state of a thread. */
export interface ThreadReadState {
  /** The root's author, a replier, a mentioned user, or one who marked the thread unread. */
  participant: boolean;
  /** Live replies after the user's cursor, not their own nor from users they block; 0 for a non-participant. */
  unread_replies: number;
  /** The user's cursor; null when they have none. */
  last_read_at: string | null;
}

/** A user's own state of a channel (CONTRACT §18), as `channel.state_changed` carries it. */
export interface ChannelStatePayload {
  channel_id: string;
  /** "forever", a time while the mute lasts, or null */
  muted_until: string | null;
  hidden: boolean;
  archived: boolean;
}

/**
 * CONTRACT §22: the user marked a channel unread from a message on; their own sockets and sync only.
 * `last_read_at` is the message's instant less 1 ms; the counts are the user's own after the move.
 */
export type MarkUnreadPayload = ChannelMarkedUnread | ThreadMarkedUnread;

export interface ChannelMarkedUnread {
  channel_id: string;
  thread_id: null;
  message_id: string;
  last_read_at: string;
  unread_count: number;
  mention_unread_count: number;
}

/**
 * CONTRACT §23: the user marked a thread unread from a reply on (`thread_id` its root); their own sockets
 * and sync only. `message_id` is null when the thread had no reply to mark.
 */
export interface ThreadMarkedUnread {
  channel_id: string;
  thread_id: string;
  message_id: string | null;
  last_read_at: string | null;
  unread_replies: number;
}

/** CONTRACT §23: the user read a thread (their cursor moved to now); their own sockets and sync only. */
export interface ThreadReadPayload {
  channel_id: string;
  thread_id: string;
  last_read_at: string;
  unread_replies: number;
}

/** CONTRACT §24: a user's draft of a channel or a thread, as its owner sees it. */
export interface DraftView {
  channel_id: string;
  channel_external_id: string;
  /** The thread's root; null for the channel's own composer. */
  thread_id: string | null;
  parent_id: string | null;
  content: string;
  attachment_url: string | null;
  /** External ids of the mentioned members. */
  mentions: string[];
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** CONTRACT §24: a draft was deleted (explicitly, by an empty save, or by the user's send into its scope). */
export interface DraftDeletedPayload {
  channel_id: string;
  thread_id: string | null;
}

/** CONTRACT §25: a user's reminder about a message, as its owner sees it. */
export interface ReminderView {
  id: string;
  message_id: string;
  channel_id: string;
  channel_external_id: string;
  /** null: saved for later, never fires. */
  remind_at: string | null;
  status: 'saved' | 'upcoming' | 'due';
  fired_at: string | null;
  created_at: string;
  updated_at: string;
  /** The message as history shows it to the user. */
  message: MessageView;
}

/** CONTRACT §25: the webhook's reminder: whose it is, never what the message says. */
export interface ReminderDuePayload {
  reminder: {
    id: string;
    message_id: string;
    channel_id: string;
    channel_external_id: string;
    remind_at: string;
    user: { id: string; external_id: string; name: string | null };
  };
}

/** CONTRACT §25: a send kept until `scheduled_at`, as its author sees it. */
export interface ScheduledMessageView {
  id: string;
  channel_id: string;
  channel_external_id: string;
  /** The thread's root for a thread reply; null otherwise. */
  thread_id: string | null;
  /** With thread_id: the reply is also shown in the channel. */
  show_in_channel: boolean;
  /** The quoted message; null for none. */
  parent_id: string | null;
  content: string;
  attachment_url: string | null;
  /** External ids of the mentioned members, in the order given. */
  mentions: string[];
  metadata: Record<string, unknown>;
  scheduled_at: string;
  /** `failed`: its firing was refused (`error`); a new `scheduled_at` re-arms it. */
  status: 'pending' | 'failed';
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
}

/** CONTRACT §25: a scheduled message fired and was sent (to its author's sockets). */
export interface ScheduledSentPayload {
  scheduled_message_id: string;
  /** The new message, as its author sees it. */
  message: MessageView;
}

/** CONTRACT §25: a scheduled message's firing was refused; it stays listed as failed. */
export interface ScheduledFailedPayload {
  scheduled_message_id: string;
  error: { code: string; message: string };
}

/**
 * CONTRACT §19: a report of a message (`message.flagged`) or a user (`user.flagged`). A workspace event
 * for webhooks only. `user_id` is the flagged user, or the message's author (null once the author was
 * deleted); `by_user` is null for automatic moderation's flags.
 */
export interface FlagPayload {
  flag_id: string;
  target_type: 'message' | 'user';
  message_id?: string;
  user_id: string | null;
  by_user: UserRef | null;
  reason: string | null;
}

/** Event types and payloads as SPEC.md's webhook table gives them (plus the realtime-only ones). */
export interface DomainEventMap {
  'user.created': { user: UserPayload };
  'channel.created': { channel: ChannelPayload };
  'channel.updated': { channel: ChannelPayload };
  'channel.deleted': { channel: ChannelPayload };
  'member.joined': MemberChangePayload;
  'member.left': MemberChangePayload;
  'member.role_changed': MemberChangePayload & { role: 'admin' | 'member' };
  'channel.read': {
    channel_id: string;
    channel_external_id: string;
    user_id: string;
    external_id: string;
    last_read_at: string;
  };
  'message.created': {
    message: {
      id: string;
      channel_id: string;
      channel_external_id: string;
      user: UserRef | null;
      content: string;
      type: string;
      attachment_url: string | null;
      created_at: string;
      /** CONTRACT §17: the message's custom data ({} when none). */
      metadata: Record<string, unknown>;
      parent_id?: string;
      quoted_message?: QuotedMessagePayload;
      mentions?: MentionRef[];
      /** On thread replies (CONTRACT §15) only. */
      thread_id?: string;
      show_in_channel?: boolean;
      /** CONTRACT §26: [] (previews come later, in `message.updated`). */
      previews: LinkPreview[];
      /** CONTRACT §28: a poll message's poll (without my_votes). */
      poll?: PollView;
      /** CONTRACT §19: the author is shadow-banned (webhooks only; nobody else is told of the message). */
      shadowed?: true;
    };
  };
  /**
   * An edit (content, metadata and the previews still written), or the link previews the worker found
   * for a message (CONTRACT §26: `previews` only, `edited_at` as it was).
   */
  'message.updated': {
    message: {
      id: string;
      channel_id: string;
      channel_external_id: string;
      content?: string;
      metadata?: Record<string, unknown>;
      previews: LinkPreview[];
      edited_at: string | null;
    };
  };
  /**
   * An unsend (the message stays, blanked), or with `removed: true` a message removed outright by an
   * erasure (`DELETE /v1/users/:external_id?messages=delete`, CONTRACT §20): clients drop it.
   */
  'message.deleted': {
    message: {
      id: string;
      channel_id: string;
      channel_external_id: string;
      deleted_at: string;
      removed?: true;
    };
  };
  /**
   * CONTRACT §28: a poll's counts or its close: realtime `message.updated` `{id, channel_id, poll}` with
   * its seq, and sync; no webhook (poll.voted and poll.closed are the webhooks).
   */
  'poll.updated': {
    message: { id: string; channel_id: string; channel_external_id: string; poll: PollView };
  };
  /** CONTRACT §28: a vote changed; webhooks only (no audience, no channel). */
  'poll.voted': PollVotedPayload;
  /** CONTRACT §28: a poll closed; webhooks only. */
  'poll.closed': PollClosedPayload;
  /**
   * A thread root's counters changed (a reply, or an unsend of one): realtime `message.updated` and sync
   * only, no webhook (CONTRACT §15). A reply's event is completed by chat_send_message with the counters.
   */
  'thread.updated': {
    message: ThreadCounters & { id: string; channel_id: string; channel_external_id: string };
  };
  'message.pinned': PinPayload;
  'message.unpinned': PinPayload;
  'message.reaction.added': ReactionPayload;
  'message.reaction.removed': ReactionPayload;
  'message.mentioned': {
    message_id: string;
    channel_id: string;
    channel_external_id: string;
    by_user: UserRef | null;
    mentions: MentionRef[];
  };
  /**
   * Realtime and sync only: a workspace event (no channel, no seq) whose audience is the one user whose
   * state it is, so it reaches that user's own sockets and /v1/me/sync and nobody else.
   */
  'channel.state_changed': ChannelStatePayload;
  /** CONTRACT §22: user-scoped like channel.state_changed (audience: the user), no webhook. */
  'notification.mark_unread': MarkUnreadPayload;
  /** CONTRACT §23: user-scoped (audience: the reader), no webhook. */
  'notification.thread_read': ThreadReadPayload;
  /** CONTRACT §24: user-scoped (audience: the draft's owner), never a webhook. */
  'draft.updated': { draft: DraftView };
  'draft.deleted': DraftDeletedPayload;
  /** CONTRACT §25: a reminder fired; user-scoped (audience: its owner), and the push to their devices. */
  'notification.reminder_due': { reminder: ReminderView; message: MessageView };
  /** CONTRACT §25: a reminder fired; webhooks only (no audience, no channel: nobody's sockets or sync). */
  'reminder.due': ReminderDuePayload;
  /** CONTRACT §25: user-scoped (audience: the author), no webhook. */
  'scheduled.sent': ScheduledSentPayload;
  'scheduled.failed': ScheduledFailedPayload;
  /** CONTRACT §19: a ban was set (or replaced) or lifted; `channel_id` for a channel ban. Webhooks only. */
  'user.banned': BanPayload;
  'user.unbanned': BanPayload;
  'message.moderated': {
    channel_id: string;
    channel_external_id: string;
    user_id: string;
    message_id?: string;
    rule: string;
    action: string;
    excerpt: string;
  };
  'message.flagged': FlagPayload;
  'user.flagged': FlagPayload;
}

export type DomainEventType = keyof DomainEventMap;
