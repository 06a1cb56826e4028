import { ChatApiError, networkError, type ChatErrorCode } from './errors.js';
import type { ConnectionStatus, ResetInfo, ServerEventName } from './events.js';
import type {
  AddMyChannelMembersResponse,
  Block,
  BlockPage,
  Channel,
  ChannelEventPage,
  ChannelPresence,
  ChannelReceipts,
  ChannelStateDto,
  CreateFlagDto,
  Device,
  DeviceList,
  EditMessageDto,
  GetChannelPresenceData,
  ErrorDetail,
  Flag,
  ListChannelEventsData,
  ListMessagesData,
  ListMyChannelsData,
  ListPinnedMessagesData,
  ListRepliesData,
  Message,
  MessagePage,
  MyChannel,
  MyChannelPage,
  PresignAttachmentDto,
  PresignedUpload,
  ReadCursors,
  RegisterDeviceDto,
  SearchChannelMessagesData,
  SearchMessagesData,
  SearchPage,
  SendMessageDto,
  SyncMyEventsData,
  SyncPage,
  UpdateChannelDto,
  MarkUnreadResult,
  CreateReminderDto,
  Draft,
  DraftList,
  ListMyDraftsData,
  ListMyRemindersData,
  ListMyScheduledMessagesData,
  LinkPreview,
  CreatePollDto,
  ListPollVotesData,
  PollVoteListDto,
  Reminder,
  ReminderList,
  ScheduledMessage,
  ScheduledMessageAnswer,
  ScheduledMessageChanged,
  ScheduledMessageList,
  UpdateScheduledMessageDto,
  UpdateReminderDto,
  SaveDraftDto,
  ListMyThreadsData,
  MyThreadList,
  ThreadReadResult,
} from './generated/types.gen.js';
import { randomId } from './ids.js';
import { Realtime, type AnyEventHandler, type EventHandler, type PresenceMode } from './realtime.js';
import { RestTransport, toChatApiError } from './rest.js';
import { TokenManager, type TokenSource } from './token.js';
import type { ManagerOptions, Socket, SocketOptions } from 'socket.io-client';

/** A user's presence as presence.subscribe answers it. */
export interface PresenceState {
  external_id: string;
  online: boolean;
  /** When the user was last online; null while online (or never seen). */
  last_seen_at: string | null;
}

export interface SendRetryOptions {
  /** Attempts in all (default: unlimited within `timeoutMs`). */
  maxAttempts?: number;
  /** Give up retrying after this long (default 60 s); the last error is thrown. */
  timeoutMs?: number;
  /** First back-off delay (default 250 ms), doubled each attempt up to `maxDelayMs` (default 8 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

export interface ChatClientOptions {
  /** The service's base URL, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** The user's JWT, or a function answering one (called again on reconnect, after a 401 and before `exp`). */
  token: TokenSource;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  /** Ask for a new token this long before its `exp` (default 60 s). */
  refreshBeforeExpirySeconds?: number;
  /** A background catch-up through /v1/me/sync this often while connected (default 30 s; 0: off). */
  syncIntervalMs?: number;
  /** How the socket wants presence: `each` (default), `batch` or `none`. */
  presence?: PresenceMode;
  /** Retries of sends on network errors, 5xx, 429 and 503 (same idempotency key every time). */
  sendRetry?: SendRetryOptions;
  /** Passed to socket.io-client's io() (default transports: websocket only). */
  socket?: Partial<ManagerOptions & SocketOptions>;
}

/** What sendMessage takes: the REST send body; `idempotency_key` is generated when absent. */
export type SendMessageInput = Omit<SendMessageDto, 'user_external_id' | 'scheduled_at'>;
/** What scheduleMessage takes: a send body with its `scheduled_at`. */
export type ScheduleMessageInput = SendMessageInput & { scheduled_at: string };

export interface SendOptions {
  signal?: AbortSignal;
  /** Overrides the client's `sendRetry` for this send. */
  retry?: SendRetryOptions;
}

export type ListMyChannelsQuery = NonNullable<ListMyChannelsData['query']>;
export type ListMessagesQuery = NonNullable<ListMessagesData['query']>;
export type ListRepliesQuery = NonNullable<ListRepliesData['query']>;
export type ListPollVotesQuery = NonNullable<ListPollVotesData['query']>;
export type ListPinsQuery = NonNullable<ListPinnedMessagesData['query']>;
export type SearchMessagesQuery = SearchMessagesData['query'];
export type SearchChannelMessagesQuery = SearchChannelMessagesData['query'];
export type ListChannelEventsQuery = NonNullable<ListChannelEventsData['query']>;
export type SyncQuery = NonNullable<SyncMyEventsData['query']>;
export type GetPresenceQuery = NonNullable<GetChannelPresenceData['query']>;
export type ListMyDraftsQuery = NonNullable<ListMyDraftsData['query']>;
export type ListMyThreadsQuery = NonNullable<ListMyThreadsData['query']>;
export type ListMyRemindersQuery = NonNullable<ListMyRemindersData['query']>;
export type ListMyScheduledQuery = NonNullable<ListMyScheduledMessagesData['query']>;

const seg = (s: string) => encodeURIComponent(s);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });

/**
 * A user's client for chat-service: typed REST methods for the end-user routes, and realtime events
 * that are gap-free by construction (see connect()).
 */
export class ChatClient {
  private readonly rest: RestTransport;
  private readonly tokens: TokenManager;
  private readonly realtime: Realtime;

  constructor(private readonly options: ChatClientOptions) {
    const fetchImpl =
      options.fetch ??
      ((input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init));
    this.tokens = new TokenManager(options.token, (options.refreshBeforeExpirySeconds ?? 60) * 1000);
    this.rest = new RestTransport(options.baseUrl, this.tokens, fetchImpl);
    this.realtime = new Realtime(this.rest, this.tokens, {
      baseUrl: options.baseUrl,
      ...(options.presence ? { presence: options.presence } : {}),
      ...(options.syncIntervalMs !== undefined ? { syncIntervalMs: options.syncIntervalMs } : {}),
      ...(options.socket ? { socket: options.socket } : {}),
    });
  }

  // ---- realtime ----

  /**
   * Opens the socket and resolves once connected and caught up. From then on every channel event
   * reaches the handlers once, in each channel's `seq` order: a jump is filled from the channel's
   * events, a reconnect catches up through /v1/me/sync, duplicates are dropped.
   */
  connect(): Promise<void> {
    return this.realtime.connect();
  }

  /** Closes the socket; a later connect() resumes from where this one stopped. */
  disconnect(): void {
    this.realtime.disconnect();
  }

  /** Calls `handler` with each event of that name; answers a function that removes it. */
  on<K extends ServerEventName>(name: K, handler: EventHandler<K>): () => void {
    return this.realtime.on(name, handler);
  }

  /** Calls `handler` with every event (narrow it by `envelope.type`). */
  onAny(handler: AnyEventHandler): () => void {
    return this.realtime.onAny(handler);
  }

  onStatus(handler: (status: ConnectionStatus) => void): () => void {
    return this.realtime.onStatus(handler);
  }

  /** The client could not catch up (away longer than the service keeps events, or a channel became unreadable): reload from history. */
  onReset(handler: (info: ResetInfo) => void): () => void {
    return this.realtime.onReset(handler);
  }

  /** Background failures (a catch-up that will be retried, a handler that threw, a refused token). */
  onError(handler: (error: unknown) => void): () => void {
    return this.realtime.onError(handler);
  }

  get status(): ConnectionStatus {
    return this.realtime.connectionStatus;
  }

  /** The /v1/me/sync cursor the client has caught up to (persist it to resume later with `resumeFrom`). */
  get syncCursor(): string | undefined {
    return this.realtime.syncCursor;
  }

  /** Before connect(): catch up from a cursor saved earlier instead of starting from now. */
  resumeFrom(cursor: string): void {
    this.realtime.syncCursor = cursor;
  }

  /** The last `seq` delivered for a channel (undefined before its first event). */
  channelSeq(channelId: string): number | undefined {
    return this.realtime.sequencer.seq(channelId);
  }

  /** Catches up through /v1/me/sync now. */
  syncNow(): Promise<void> {
    return this.realtime.syncNow();
  }

  /** The underlying socket.io-client socket (undefined before connect()). */
  get socket(): Socket | undefined {
    return this.realtime.rawSocket;
  }

  /**
   * Presence of these users (1-200 external ids a call, at most 500 per socket) from now on: this
   * socket gets their `presence.changed`, also for users it shares only large channels with, and the
   * answer is their state now. Users outside the workspace, or sharing no channel with you, are left
   * out of the answer and not subscribed. Subscriptions end with the socket: subscribe again after a
   * reconnect.
   */
  async subscribePresence(externalIds: string[]): Promise<PresenceState[]> {
    const data = (await this.ack('presence.subscribe', { external_ids: externalIds })) as {
      users: PresenceState[];
    };
    return data.users;
  }

  /** Stops the `presence.changed` of these users that subscribePresence asked for. */
  async unsubscribePresence(externalIds: string[]): Promise<void> {
    await this.ack('presence.unsubscribe', { external_ids: externalIds });
  }

  /** A client event with an acknowledgement: its `data`, or its error as a ChatApiError (status 0). */
  private ack(event: string, payload: unknown, timeoutMs = 10_000): Promise<unknown> {
    const socket = this.realtime.rawSocket;
    if (!socket?.connected) return Promise.reject(networkError(undefined, `${event}: not connected`));
    return socket
      .timeout(timeoutMs)
      .emitWithAck(event, payload)
      .then(
        (
          a:
            | { ok: true; data: unknown }
            | { ok: false; error: { code: ChatErrorCode; message: string; details?: ErrorDetail[] } },
        ) => {
          if (a.ok) return a.data;
          throw new ChatApiError({
            code: a.error.code,
            status: 0,
            message: a.error.message,
            details: a.error.details,
          });
        },
        (e: unknown) => {
          throw networkError(e, `${event}: no acknowledgement`);
        },
      );
  }

  startTyping(channelId: string): void {
    this.realtime.rawSocket?.emit('typing.start', { channel_id: channelId });
  }

  stopTyping(channelId: string): void {
    this.realtime.rawSocket?.emit('typing.stop', { channel_id: channelId });
  }

  // ---- channels ----

  /** The caller's channels, most recently active first, with unread and mention counts. */
  listMyChannels(query: ListMyChannelsQuery = {}): Promise<MyChannelPage> {
    return this.rest.json('GET', '/v1/me/channels', { query });
  }

  /** One of the caller's channels (by id or external_id), as its entry in the caller's channel list. */
  getMyChannel(channelId: string): Promise<MyChannel> {
    return this.rest.json('GET', `/v1/me/channels/${seg(channelId)}`);
  }

  updateMyChannel(channelId: string, body: UpdateChannelDto): Promise<Channel> {
    return this.rest.json('PATCH', `/v1/me/channels/${seg(channelId)}`, { body });
  }

  /** The caller's own state of a channel: mute, hide, archive. */
  setChannelState(channelId: string, body: ChannelStateDto): Promise<MyChannel> {
    return this.rest.json('PATCH', `/v1/me/channels/${seg(channelId)}/state`, { body });
  }

  addMembers(channelId: string, externalIds: string[]): Promise<AddMyChannelMembersResponse> {
    return this.rest.json('POST', `/v1/me/channels/${seg(channelId)}/members`, {
      body: { member_external_ids: externalIds },
    });
  }

  async removeMembers(channelId: string, externalIds: string[]): Promise<void> {
    await this.rest.request('DELETE', `/v1/me/channels/${seg(channelId)}/members`, {
      body: { member_external_ids: externalIds },
    });
  }

  /** Leave a channel: remove the caller. */
  async removeMember(channelId: string, externalId: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/me/channels/${seg(channelId)}/members/${seg(externalId)}`);
  }

  setMemberRole(channelId: string, externalId: string, role: 'admin' | 'member'): Promise<Channel> {
    return this.rest.json('PATCH', `/v1/me/channels/${seg(channelId)}/members/${seg(externalId)}`, {
      body: { role },
    });
  }

  markRead(channelId: string): Promise<ReadCursors> {
    return this.rest.json('POST', `/v1/channels/${seg(channelId)}/read`, { body: {} });
  }

  /** Mark the channel unread from a message on: it and every later message count as unread again. */
  markUnread(channelId: string, messageId: string): Promise<MarkUnreadResult> {
    return this.rest.json('POST', `/v1/channels/${seg(channelId)}/unread`, {
      body: { message_id: messageId },
    });
  }

  // ---- thread read state ----

  /** Mark the thread of a root read (the caller's cursor in it moves to now). */
  markThreadRead(rootId: string): Promise<ThreadReadResult> {
    return this.rest.json('POST', `/v1/messages/${seg(rootId)}/thread/read`, { body: {} });
  }

  /** Mark a thread unread from a reply on (without one: from the newest reply not the caller's). */
  markThreadUnread(rootId: string, messageId?: string): Promise<ThreadReadResult> {
    return this.rest.json('POST', `/v1/messages/${seg(rootId)}/thread/unread`, {
      body: messageId ? { message_id: messageId } : {},
    });
  }

  /** The threads the caller takes part in, latest reply first, with their unread replies. */
  listMyThreads(query: ListMyThreadsQuery = {}): Promise<MyThreadList> {
    return this.rest.json('GET', '/v1/me/threads', { query });
  }

  // ---- reminders ----

  /**
   * Set a reminder about a message: with `remind_at` (1 s to 1 year ahead) it fires then, as
   * `notification.reminder_due` on the user's sockets and a push; without, it is saved for later.
   */
  createReminder(messageId: string, body: CreateReminderDto = {}): Promise<Reminder> {
    return this.rest.json('POST', `/v1/messages/${seg(messageId)}/reminder`, { body });
  }

  /** Re-time a reminder (a time arms it again, a fired one too) or, with null, make it saved. */
  updateReminder(messageId: string, body: UpdateReminderDto): Promise<Reminder> {
    return this.rest.json('PATCH', `/v1/messages/${seg(messageId)}/reminder`, { body });
  }

  async deleteReminder(messageId: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/messages/${seg(messageId)}/reminder`);
  }

  /** The caller's reminders: `due` newest fired first, `upcoming` soonest first, else newest first. */
  listMyReminders(query: ListMyRemindersQuery = {}): Promise<ReminderList> {
    return this.rest.json('GET', '/v1/me/reminders', { query });
  }

  // ---- drafts ----

  /**
   * Save the caller's draft of a channel (or of a thread, with `thread_id`): the saved draft, or null
   * when empty content without an attachment deleted it. Other devices of the user get `draft.updated`.
   */
  async saveDraft(channelId: string, body: SaveDraftDto): Promise<Draft | null> {
    const res = await this.rest.request<Draft>('PUT', `/v1/channels/${seg(channelId)}/draft`, { body });
    return res.status === 204 ? null : res.data;
  }

  /** The caller's draft of a channel (or thread), or null when there is none. */
  async getDraft(channelId: string, threadId?: string): Promise<Draft | null> {
    try {
      return await this.rest.json('GET', `/v1/channels/${seg(channelId)}/draft`, {
        query: threadId ? { thread_id: threadId } : {},
      });
    } catch (e) {
      if (e instanceof ChatApiError && e.status === 404 && e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }

  async deleteDraft(channelId: string, threadId?: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/channels/${seg(channelId)}/draft`, {
      query: threadId ? { thread_id: threadId } : {},
    });
  }

  /** The caller's drafts, most recently updated first. */
  listMyDrafts(query: ListMyDraftsQuery = {}): Promise<DraftList> {
    return this.rest.json('GET', '/v1/me/drafts', { query });
  }

  markDelivered(channelId: string): Promise<ReadCursors> {
    return this.rest.json('POST', `/v1/channels/${seg(channelId)}/delivered`, { body: {} });
  }

  getReceipts(channelId: string): Promise<ChannelReceipts> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/receipts`);
  }

  /** A page of the members' presence: online ones first, then by external_id, with `online_count`. */
  getPresence(channelId: string, query: GetPresenceQuery = {}): Promise<ChannelPresence> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/presence`, { query });
  }

  // ---- messages ----

  /** History, newest first with `before`; with `after` (a `next_cursor` or a time) the newer ones, oldest first. */
  listMessages(channelId: string, query: ListMessagesQuery = {}): Promise<MessagePage> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/messages`, { query });
  }

  /**
   * Sends a message. An idempotency key is generated unless given, and the send is retried with that
   * same key on network errors, 5xx, 429 and 503 until the service acknowledges it, so a retry never
   * posts twice. Pass your own `idempotency_key` to retry a send later yourself.
   */
  async sendMessage(channelId: string, input: SendMessageInput, opts: SendOptions = {}): Promise<Message> {
    const body: SendMessageDto = { ...input, idempotency_key: input.idempotency_key ?? randomId() };
    return this.retrying(
      () =>
        this.rest.json<Message>('POST', `/v1/channels/${seg(channelId)}/messages`, {
          body,
          ...(opts.signal ? { signal: opts.signal } : {}),
        }),
      opts,
    );
  }

  /**
   * Sends a message later: kept until `scheduled_at` (1 s to 30 days ahead), seen by nobody else until
   * then, then sent as a normal send (`scheduled.sent`, or `scheduled.failed` if refused then). Retried
   * like sendMessage, with the same idempotency key: a retry that arrives after the message was sent
   * answers `{scheduled_message: null, message}`.
   */
  async scheduleMessage(
    channelId: string,
    input: ScheduleMessageInput,
    opts: SendOptions = {},
  ): Promise<ScheduledMessageAnswer> {
    const body: SendMessageDto = { ...input, idempotency_key: input.idempotency_key ?? randomId() };
    return this.retrying(
      () =>
        this.rest.json<ScheduledMessageAnswer>('POST', `/v1/channels/${seg(channelId)}/messages`, {
          body,
          ...(opts.signal ? { signal: opts.signal } : {}),
        }),
      opts,
    );
  }

  /** The caller's scheduled messages (pending and failed), soonest first; `channel` narrows to one channel. */
  listMyScheduledMessages(query: ListMyScheduledQuery = {}): Promise<ScheduledMessageList> {
    return this.rest.json('GET', '/v1/me/scheduled', { query });
  }

  /** Change a scheduled message before it is sent; a new `scheduled_at` re-arms a failed one. */
  async updateScheduledMessage(id: string, body: UpdateScheduledMessageDto): Promise<ScheduledMessage> {
    const answer = await this.rest.json<ScheduledMessageChanged>('PATCH', `/v1/scheduled/${seg(id)}`, {
      body,
    });
    return answer.scheduled_message;
  }

  /** Cancel a scheduled message: it is never sent. */
  async cancelScheduledMessage(id: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/scheduled/${seg(id)}`);
  }

  /** The preview of a page (title, description, image, site name), fetched now or from the cache. */
  previewLink(url: string): Promise<LinkPreview> {
    return this.rest.json('POST', '/v1/previews', { body: { url } });
  }

  editMessage(messageId: string, body: EditMessageDto): Promise<Message> {
    return this.rest.json('PATCH', `/v1/messages/${seg(messageId)}`, { body });
  }

  /** Unsend: the message stays, blanked. */
  unsendMessage(messageId: string): Promise<Message> {
    return this.rest.json('DELETE', `/v1/messages/${seg(messageId)}`);
  }

  addReaction(messageId: string, emoji: string): Promise<Message> {
    return this.rest.json('POST', `/v1/messages/${seg(messageId)}/reactions`, { body: { emoji } });
  }

  removeReaction(messageId: string, emoji: string): Promise<Message> {
    return this.rest.json('DELETE', `/v1/messages/${seg(messageId)}/reactions/${seg(emoji)}`);
  }

  /** CONTRACT §28: a poll, sent as a message of type `poll` (retried safely: an idempotency key is added). */
  createPoll(channelId: string, input: CreatePollDto, opts: SendOptions = {}): Promise<Message> {
    const body: CreatePollDto = { ...input, idempotency_key: input.idempotency_key ?? randomId() };
    return this.retrying(
      () =>
        this.rest.json<Message>('POST', `/v1/channels/${seg(channelId)}/polls`, {
          body,
          ...(opts.signal ? { signal: opts.signal } : {}),
        }),
      opts,
    );
  }

  /** Replaces the user's vote with these options; answers the poll message with the new counts and `my_votes`. */
  votePoll(messageId: string, optionIds: string[]): Promise<Message> {
    return this.rest.json('PUT', `/v1/messages/${seg(messageId)}/poll/vote`, {
      body: { option_ids: optionIds },
    });
  }

  withdrawPollVote(messageId: string): Promise<Message> {
    return this.rest.json('DELETE', `/v1/messages/${seg(messageId)}/poll/vote`);
  }

  /** Its creator or a group admin. */
  closePoll(messageId: string): Promise<Message> {
    return this.rest.json('POST', `/v1/messages/${seg(messageId)}/poll/close`);
  }

  /** Who voted, newest first (403 POLL_ANONYMOUS for an anonymous poll). */
  listPollVotes(messageId: string, query: ListPollVotesQuery = {}): Promise<PollVoteListDto> {
    return this.rest.json('GET', `/v1/messages/${seg(messageId)}/poll/votes`, { query });
  }

  /** A thread's replies, oldest first. */
  listReplies(messageId: string, query: ListRepliesQuery = {}): Promise<MessagePage> {
    return this.rest.json('GET', `/v1/messages/${seg(messageId)}/replies`, { query });
  }

  pinMessage(messageId: string): Promise<Message> {
    return this.rest.json('POST', `/v1/messages/${seg(messageId)}/pin`);
  }

  unpinMessage(messageId: string): Promise<Message> {
    return this.rest.json('DELETE', `/v1/messages/${seg(messageId)}/pin`);
  }

  listPins(channelId: string, query: ListPinsQuery = {}): Promise<MessagePage> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/pins`, { query });
  }

  flagMessage(messageId: string, body: CreateFlagDto = {}): Promise<Flag> {
    return this.rest.json('POST', `/v1/messages/${seg(messageId)}/flag`, { body });
  }

  flagUser(externalId: string, body: CreateFlagDto = {}): Promise<Flag> {
    return this.rest.json('POST', `/v1/users/${seg(externalId)}/flag`, { body });
  }

  // ---- search ----

  /** Search across the caller's channels; results carry `highlights`. */
  searchMessages(query: SearchMessagesQuery): Promise<SearchPage> {
    return this.rest.json('GET', '/v1/search/messages', { query });
  }

  searchChannelMessages(channelId: string, query: SearchChannelMessagesQuery): Promise<SearchPage> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/messages/search`, { query });
  }

  // ---- blocks and devices ----

  listBlocks(): Promise<BlockPage> {
    return this.rest.json('GET', '/v1/me/blocks');
  }

  blockUser(externalId: string): Promise<Block> {
    return this.rest.json('POST', '/v1/me/blocks', { body: { external_id: externalId } });
  }

  async unblockUser(externalId: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/me/blocks/${seg(externalId)}`);
  }

  listDevices(): Promise<DeviceList> {
    return this.rest.json('GET', '/v1/me/devices');
  }

  registerDevice(body: RegisterDeviceDto): Promise<Device> {
    return this.rest.json('POST', '/v1/me/devices', { body });
  }

  async unregisterDevice(token: string): Promise<void> {
    await this.rest.request('DELETE', `/v1/me/devices/${seg(token)}`);
  }

  // ---- attachments ----

  presignAttachment(body: PresignAttachmentDto): Promise<PresignedUpload> {
    return this.rest.json('POST', '/v1/attachments/presign', { body });
  }

  /** Presigns and uploads a file; answers the presign (use its `public_url` as a message's `attachment_url`). */
  async uploadAttachment(
    file: Blob | ArrayBuffer | Uint8Array,
    meta: { filename: string; mime_type: string; channel_id?: string },
  ): Promise<PresignedUpload> {
    const size = file instanceof Blob ? file.size : file.byteLength;
    const up = await this.presignAttachment({ ...meta, size_bytes: size });
    const fetchImpl = this.options.fetch ?? globalThis.fetch.bind(globalThis);
    let res: Response;
    try {
      res = await fetchImpl(up.upload_url, {
        method: up.method,
        headers: up.headers,
        body: file as NonNullable<RequestInit['body']>,
      });
    } catch (e) {
      throw networkError(e, 'upload failed');
    }
    if (!res.ok) throw await toChatApiError(res);
    return up;
  }

  // ---- catching up by hand ----

  /** A channel's events after a seq (the client does this itself on a gap). */
  listChannelEvents(channelId: string, query: ListChannelEventsQuery = {}): Promise<ChannelEventPage> {
    return this.rest.json('GET', `/v1/channels/${seg(channelId)}/events`, { query });
  }

  /** Every event of the caller's channels after a cursor (the client does this itself after a reconnect). */
  sync(query: SyncQuery = {}): Promise<SyncPage> {
    return this.rest.json('GET', '/v1/me/sync', { query });
  }

  private async retrying<T>(call: () => Promise<T>, opts: SendOptions): Promise<T> {
    const r = { ...this.options.sendRetry, ...opts.retry };
    const maxAttempts = r.maxAttempts ?? Infinity;
    const deadline = Date.now() + (r.timeoutMs ?? 60_000);
    const min = r.minDelayMs ?? 250;
    const max = r.maxDelayMs ?? 8_000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        const retryable = e instanceof ChatApiError && e.retryable && !opts.signal?.aborted;
        if (!retryable || attempt >= maxAttempts) throw e;
        const backoff = Math.min(max, min * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
        // Retry-After is the least wait; up to half as much again at random, so that the clients an
        // overloaded service refused together do not all come back in the same instant
        const wait =
          e.retryAfterSeconds !== undefined
            ? Math.max(backoff, e.retryAfterSeconds * 1000 * (1 + Math.random() / 2))
            : backoff;
        if (Date.now() + wait > deadline) throw e;
        await sleep(wait, opts.signal);
        if (opts.signal?.aborted) throw e;
      }
    }
  }
}
