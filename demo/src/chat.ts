import { ChatClient, isChatApiError } from '@chat-service/client';
import type {
  ConnectionStatus,
  Message,
  MyChannel,
  Reminder,
  ScheduledMessage,
  SearchHit,
} from '@chat-service/client';
import { Composer } from './composer';
import { append, clear, h, highlighted, shortTime } from './dom';
import { displayName } from './format';
import { MessageList, renderMessage } from './message-view';
import { devSignIn, saveSession, type Session } from './session';

interface Conversation {
  info: MyChannel;
  list: MessageList;
  loaded: boolean;
  /** Other members' read and delivered cursors, by external id. */
  receipts: Map<string, { read: string; delivered: string }>;
  members: string[];
  typing: Map<string, ReturnType<typeof setTimeout>>;
  /** Marked unread while open: its counts show and it is not marked read until it is opened again. */
  markedUnread: boolean;
}

interface Thread {
  root: Message;
  list: MessageList;
}

const PAGE = 30;
/** A typing indicator that was never withdrawn (the other side went away) fades after this long. */
const TYPING_TTL_MS = 8000;
/** The member list shows this many (online first); a large channel's are followed by subscription. */
const MEMBERS_SHOWN = 200;

const STATUS_TEXT: Record<ConnectionStatus, string> = {
  connected: 'Online',
  syncing: 'Catching up…',
  connecting: 'Connecting…',
  disconnected: 'Offline: reconnecting when the network is back',
};

export function startChat(root: HTMLElement, session: Session, signOut: () => void): void {
  let current = session;
  const client = new ChatClient({
    baseUrl: location.origin,
    // called on connect, on reconnect and before expiry: a development session signs in again
    token: async () => {
      const soon = current.expiresAt && Date.parse(current.expiresAt) < Date.now() + 120_000;
      if (soon && current.via === 'dev') {
        current = await devSignIn(current.userId, '');
        saveSession(current);
      }
      return current.token;
    },
    sendRetry: { timeoutMs: 8000 },
  });
  new ChatApp(root, current, client, () => {
    client.disconnect();
    signOut();
  }).start();
}

class ChatApp {
  private readonly me: string;
  private myUserId: string | undefined;
  private readonly conversations = new Map<string, Conversation>();
  private readonly presence = new Map<string, boolean>();
  private active: Conversation | undefined;
  /** The channel list's order (most recently active first), as the service answered it. */
  private channelOrder: string[] = [];
  private thread: Thread | undefined;

  private readonly shell: HTMLDivElement;
  private readonly statusEl: HTMLSpanElement;
  private readonly channelList: HTMLUListElement;
  private readonly title: HTMLHeadingElement;
  private readonly memberList: HTMLUListElement;
  private readonly scroller: HTMLDivElement;
  private readonly messagesEl: HTMLOListElement;
  private readonly typingEl: HTMLParagraphElement;
  private readonly composer: Composer;
  private readonly panel: HTMLElement;
  private readonly remindersButton: HTMLButtonElement;
  /** The latest reminder that came due (CONTRACT §25), until dismissed. */
  private readonly reminderToast: HTMLDivElement;
  /** Reminders that came due since the list was last looked at. */
  private dueReminders = 0;
  private readonly errorEl: HTMLParagraphElement;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** Per channel: a burst of messages is marked read once, and switching channels cancels nothing. */
  private readonly readTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** The user's drafts (CONTRACT §24) by scope (draftKey), as the service holds them: they follow the user across devices. */
  private readonly drafts = new Map<string, string>();
  /** A draft save in flight per scope: a send there waits for it, so the send takes the draft with it. */
  private readonly draftSaves = new Map<string, Promise<void>>();
  /** Per thread: a burst of replies on screen is marked read once. */
  private readonly threadReadTimers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly root: HTMLElement,
    session: Session,
    private readonly client: ChatClient,
    private readonly signOut: () => void,
  ) {
    this.me = session.userId;
    this.myUserId = session.uid;
    this.statusEl = h(
      'span',
      { class: 'status', role: 'status', 'data-status': 'connecting' },
      STATUS_TEXT.connecting,
    );
    this.channelList = h('ul', { class: 'channels', 'aria-labelledby': 'channels-title' });
    this.title = h('h2', { id: 'channel-title', tabindex: -1 }, 'Pick a channel');
    this.memberList = h('ul', { class: 'members', 'aria-label': 'Members' });
    this.messagesEl = h('ol', { class: 'messages', 'aria-labelledby': 'channel-title' });
    this.scroller = h(
      'div',
      { class: 'scroller', role: 'log', 'aria-label': 'Messages', tabindex: 0 },
      this.messagesEl,
    );
    this.typingEl = h('p', { class: 'typing', 'aria-live': 'polite' });
    this.errorEl = h('p', { class: 'app-error', role: 'alert' });
    this.composer = new Composer({
      key: 'channel',
      label: 'Message',
      placeholder: 'Message (@ to mention)',
      members: () => (this.active?.members ?? []).filter((m) => m !== this.me),
      onSend: (text, mentions, quote, file) => {
        if (this.active) void this.send(this.active, this.active.list, { text, mentions, quote, file });
      },
      onTyping: (typing) => {
        if (!this.active) return;
        if (typing) this.client.startTyping(this.active.info.id);
        else this.client.stopTyping(this.active.info.id);
      },
      onDraft: (text) => {
        if (this.active) this.saveDraft(this.active.info.id, undefined, text);
      },
    });
    this.panel = h('aside', { class: 'panel', hidden: true, 'aria-labelledby': 'panel-title' });
    this.remindersButton = h(
      'button',
      { type: 'button', class: 'reminders-button', onclick: () => void this.showReminders() },
      'Reminders',
    );
    this.reminderToast = h('div', { class: 'reminder-toast', role: 'alert', hidden: true });

    const searchInput = h('input', {
      type: 'search',
      id: 'search-input',
      name: 'q',
      maxlength: 256,
      placeholder: 'Search messages',
    });
    this.shell = h(
      'div',
      { class: 'app', 'data-view': 'list' },
      h(
        'header',
        { class: 'topbar' },
        h('h1', {}, 'chat-service demo'),
        this.statusEl,
        this.remindersButton,
        h('span', { class: 'whoami' }, 'Signed in as ', h('strong', {}, this.me)),
        h('button', { type: 'button', onclick: () => this.signOut() }, 'Sign out'),
      ),
      h(
        'nav',
        { class: 'sidebar', 'aria-label': 'Channels and search' },
        h(
          'form',
          {
            role: 'search',
            class: 'search',
            onsubmit: (e: Event) => {
              e.preventDefault();
              const q = searchInput.value.trim();
              if (q) void this.search(q);
            },
          },
          h('label', { for: 'search-input', class: 'visually-hidden' }, 'Search messages'),
          searchInput,
          h('button', { type: 'submit' }, 'Search'),
        ),
        h('h2', { id: 'channels-title' }, 'Channels'),
        this.channelList,
      ),
      h(
        'main',
        { class: 'conversation', 'aria-labelledby': 'channel-title' },
        h(
          'header',
          { class: 'conversation-header' },
          h(
            'button',
            { type: 'button', class: 'back', onclick: () => this.showList() },
            h('span', { 'aria-hidden': 'true' }, '‹ '),
            'Channels',
          ),
          this.title,
          this.memberList,
          h(
            'button',
            { type: 'button', class: 'send-later', onclick: () => void this.showScheduled() },
            'Send later',
          ),
          h('button', { type: 'button', class: 'new-poll', onclick: () => this.showPollForm() }, 'New poll'),
        ),
        this.errorEl,
        this.reminderToast,
        this.scroller,
        this.typingEl,
        this.composer.el,
      ),
      this.panel,
    );
  }

  start(): void {
    clear(this.root, this.shell);
    this.client.onStatus((s) => this.showStatus(s));
    this.client.onReset(() => void this.reloadAll());
    this.client.onError((e) => console.warn('chat client:', e));
    this.listen();
    // the browser knows first when the network goes: close the socket at once, and reopen it (catching
    // up on what was missed) when the network is back
    window.addEventListener('offline', () => {
      this.client.disconnect();
      this.showStatus('disconnected');
    });
    window.addEventListener('online', () => void this.connect());
    document.addEventListener('visibilitychange', () => this.scheduleRead());
    this.scroller.addEventListener('scroll', () => {
      if (this.scroller.scrollTop < 120 && this.active) void this.loadOlder(this.active);
    });
    void this.connect()
      .then(() => this.loadDrafts())
      .then(() => this.refreshChannels(true));
  }

  private async connect(): Promise<void> {
    try {
      await this.client.connect();
    } catch (e) {
      this.showError(e);
    }
  }

  private showStatus(s: ConnectionStatus): void {
    // back after a drop: a large channel's presence subscriptions went with the old socket
    if (
      s === 'connected' &&
      this.statusEl.dataset.status &&
      this.statusEl.dataset.status !== 'connected' &&
      this.active?.info.large
    )
      void this.loadMembers(this.active).catch(() => undefined);
    this.statusEl.dataset.status = s;
    this.statusEl.textContent = STATUS_TEXT[s];
  }

  private showError(e: unknown): void {
    if (!navigator.onLine) return; // the status line says so already
    this.errorEl.textContent = isChatApiError(e)
      ? `${e.message} (${e.code})`
      : e instanceof Error
        ? e.message
        : String(e);
    setTimeout(() => (this.errorEl.textContent = ''), 6000);
  }

  // ---- channels ----

  private async refreshChannels(openFirst = false): Promise<void> {
    try {
      const page = await this.client.listMyChannels({ limit: 100 });
      for (const info of page.channels) {
        const c = this.conversations.get(info.id);
        if (c) c.info = info;
        else
          this.conversations.set(info.id, {
            info,
            list: new MessageList(),
            loaded: false,
            receipts: new Map(),
            members: [],
            typing: new Map(),
            markedUnread: false,
          });
      }
      this.renderChannels(page.channels.map((c) => c.id));
      const first = page.channels[0];
      if (openFirst && !this.active && first) await this.open(this.conversations.get(first.id)!, false);
    } catch (e) {
      this.showError(e);
    }
  }

  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refreshChannels(), 300);
  }

  private renderChannels(ids: string[]): void {
    this.channelOrder = ids;
    clear(
      this.channelList,
      ids.map((id) => {
        const c = this.conversations.get(id)!;
        const { info } = c;
        const counted = this.active !== c || c.markedUnread;
        const unread = counted ? info.unread_count : 0;
        const mentions = counted ? info.mention_unread_count : 0;
        const threads = info.unread_threads;
        const drafted = this.drafts.has(info.id);
        const label = `${this.channelName(info)}${unread ? `, ${unread} unread` : ''}${mentions ? `, ${mentions} mentioning you` : ''}${threads ? `, ${threads} ${threads === 1 ? 'thread' : 'threads'} with new replies` : ''}${drafted ? ', draft' : ''}`;
        return h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'channel',
              'data-channel': info.external_id,
              'aria-current': this.active === c ? 'true' : null,
              'aria-label': label,
              onclick: () => void this.open(c, true),
            },
            h('span', { class: 'channel-name' }, this.channelName(info)),
            mentions ? h('span', { class: 'badge mention-count', title: 'Mentions' }, `@${mentions}`) : null,
            unread ? h('span', { class: 'badge unread-count', title: 'Unread' }, String(unread)) : null,
            threads
              ? h(
                  'span',
                  { class: 'badge thread-count', title: 'Threads with new replies' },
                  `${threads} ${threads === 1 ? 'thread' : 'threads'}`,
                )
              : null,
            drafted ? h('span', { class: 'badge draft-mark', title: 'Unsent draft' }, 'Draft') : null,
          ),
        );
      }),
    );
  }

  private channelName(info: MyChannel): string {
    if (info.type === 'direct') {
      const other = info.members.find((m) => m.external_id !== this.me);
      return `@${other?.external_id ?? info.external_id}`;
    }
    return `#${info.name ?? info.external_id}`;
  }

  private async open(c: Conversation, focus: boolean): Promise<void> {
    const previous = this.active;
    // what was typed in the channel being left is saved now (its save timer goes with setText)
    if (previous && previous !== c && (this.drafts.get(previous.info.id) ?? '') !== this.composer.text)
      this.saveDraft(previous.info.id, undefined, this.composer.text);
    if (previous !== c || !this.composer.focused) this.composer.setText(this.drafts.get(c.info.id) ?? '');
    this.active = c;
    c.markedUnread = false; // opened (again): read as usual
    this.closePanel();
    // picked by the user: on a phone the conversation takes the screen (the first channel opened at
    // start-up leaves the channel list in front)
    if (focus) this.shell.dataset.view = 'chat';
    this.title.textContent = this.channelName(c.info);
    c.members = c.info.members.map((m) => m.external_id);
    clear(this.messagesEl);
    c.list.nodes.clear();
    this.renderChannels(this.channelOrder);
    this.renderTyping();
    if (focus) this.composer.focus();
    try {
      await this.loadMembers(c);
      if (!c.loaded) {
        c.loaded = true;
        await this.loadOlder(c);
      } else {
        this.renderAll(c.list, this.messagesEl);
      }
      this.scrollToEnd();
      this.scheduleRead();
    } catch (e) {
      this.showError(e);
    }
  }

  /**
   * Members (the first MEMBERS_SHOWN, online ones first), their presence and their read cursors. A
   * large channel carries no presence: the members on screen are followed by a presence subscription
   * (again after a reconnect, when subscriptions are gone).
   */
  private async loadMembers(c: Conversation): Promise<void> {
    const [presence, receipts] = await Promise.all([
      this.client.getPresence(c.info.id, { limit: MEMBERS_SHOWN }),
      this.client.getReceipts(c.info.id),
    ]);
    for (const m of presence.members) this.presence.set(m.external_id, m.online);
    c.members = presence.members.map((m) => m.external_id);
    for (const r of receipts.members)
      c.receipts.set(r.external_id, { read: r.last_read_at, delivered: r.last_delivered_at });
    if (c.info.large) {
      const others = c.members.filter((m) => m !== this.me);
      if (others.length)
        for (const u of await this.client.subscribePresence(others).catch(() => []))
          this.presence.set(u.external_id, u.online);
    }
    if (c === this.active) this.renderMembers();
  }

  private showList(): void {
    this.shell.dataset.view = 'list';
    this.channelList.querySelector<HTMLElement>('[aria-current="true"]')?.focus();
  }

  private renderMembers(): void {
    const c = this.active;
    if (!c) return;
    clear(
      this.memberList,
      c.members.map((m) => {
        const online = this.presence.get(m) ?? false;
        return h(
          'li',
          { 'data-member': m },
          h('span', {
            class: `dot ${online ? 'online' : 'offline'}`,
            role: 'img',
            'aria-label': online ? 'online' : 'offline',
          }),
          m === this.me ? `${m} (you)` : m,
        );
      }),
    );
  }

  /** Marks the open channel read (soon, once): the sender's ticks turn to read. */
  private scheduleRead(): void {
    const c = this.active;
    if (!c || c.markedUnread || document.visibilityState !== 'visible') return;
    const id = c.info.id;
    clearTimeout(this.readTimers.get(id));
    this.readTimers.set(
      id,
      setTimeout(() => {
        this.readTimers.delete(id);
        c.info.unread_count = 0;
        c.info.mention_unread_count = 0;
        this.client.markRead(c.info.id).then(
          () => this.scheduleRefresh(),
          (e: unknown) => this.showError(e),
        );
      }, 250),
    );
  }

  // ---- history ----

  private async loadOlder(c: Conversation): Promise<void> {
    const list = c.list;
    if (list.loading || !list.hasMore) return;
    list.loading = true;
    const before = this.scroller.scrollHeight - this.scroller.scrollTop;
    try {
      const page = await this.client.listMessages(c.info.id, {
        limit: PAGE,
        ...(list.cursor ? { before: list.cursor } : {}),
      });
      list.cursor = page.next_cursor;
      list.hasMore = page.has_more;
      const older = page.messages.filter((m) => !list.has(m.id)).reverse();
      for (const m of older) list.items.set(m.id, { msg: m });
      list.order.unshift(...older.map((m) => m.id));
      this.learnMe(older);
      if (this.active === c) {
        this.renderAll(list, this.messagesEl);
        this.scroller.scrollTop = this.scroller.scrollHeight - before; // keep what the reader was looking at
      }
    } catch (e) {
      this.showError(e);
    } finally {
      list.loading = false;
    }
  }

  private learnMe(messages: Message[]): void {
    if (this.myUserId) return;
    this.myUserId = messages.find((m) => m.user?.external_id === this.me)?.user?.id;
  }

  private renderAll(list: MessageList, el: HTMLElement): void {
    list.nodes.clear();
    clear(
      el,
      list.hasMore && list === this.active?.list
        ? h('li', { class: 'older' }, 'Scroll up for older messages')
        : null,
    );
    for (const key of list.order) {
      const node = this.renderItem(list, key);
      list.nodes.set(key, node);
      el.append(node);
    }
  }

  /** Where a list is on screen: the open conversation's, the open thread's, or nowhere (null). */
  private elOf(list: MessageList): HTMLElement | null {
    if (this.thread && list === this.thread.list) return this.threadMessages ?? null;
    if (this.active && list === this.active.list) return this.messagesEl;
    return null;
  }

  /** Re-renders one message in place, or appends it (lists not on screen are rendered when opened). */
  private update(list: MessageList, key: string, replaces?: string): void {
    const el = this.elOf(list);
    if (!el || list.items.get(key)?.editing) return;
    const old = list.nodes.get(replaces ?? key) ?? list.nodes.get(key);
    const node = this.renderItem(list, key);
    if (replaces) list.nodes.delete(replaces);
    list.nodes.set(key, node);
    if (old) old.replaceWith(node);
    else el.append(node);
  }

  private isAtEnd(): boolean {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 80;
  }

  private scrollToEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  // ---- rendering a message (message-view.ts) ----

  private renderItem(list: MessageList, key: string): HTMLElement {
    const inThread = list === this.thread?.list;
    return renderMessage(list, key, {
      me: this.me,
      inThread,
      online: (externalId) => this.presence.get(externalId),
      otherReceipts: (channelId) =>
        [...(this.conversations.get(channelId)?.receipts ?? [])]
          .filter(([id]) => id !== this.me)
          .map(([, r]) => r),
      react: (m, emoji, remove) => void this.toggleReaction(m, emoji, remove),
      quote: (m) => (inThread ? this.threadComposer?.setQuote(m) : this.composer.setQuote(m)),
      openThread: (m) => void this.openThread(m),
      edit: (l, k, node) => this.startEdit(l, k, node),
      unsend: (m) => void this.unsend(m),
      markUnread: (m) => void this.markUnread(m),
      remind: (m) => this.showReminderForm(m),
      vote: (m, optionIds) => void this.vote(m, optionIds),
      closePoll: (m) => void this.closePoll(m),
    });
  }

  // ---- sending ----

  private async send(
    c: Conversation,
    list: MessageList,
    input: { text: string; mentions: string[]; quote: Message | null; file: File | null },
    threadRoot?: Message,
  ): Promise<void> {
    const key = crypto.randomUUID();
    const pendingKey = `pending:${key}`;
    const now = new Date().toISOString();
    const draft: Message = {
      id: pendingKey,
      channel_id: c.info.id,
      channel_external_id: c.info.external_id,
      user_id: this.myUserId ?? null,
      user: { id: this.myUserId ?? '', external_id: this.me, name: null, avatar_url: null },
      content: input.text,
      type: input.file ? (input.file.type.startsWith('image/') ? 'image' : 'file') : 'text',
      attachment_url: input.file ? 'uploading' : null,
      attachment: null,
      metadata: { client_key: key },
      reactions: [],
      previews: [],
      receipt_status: 'sent',
      created_at: now,
      edited_at: null,
      deleted_at: null,
      pinned_at: null,
      pinned_by: null,
      ...(input.quote
        ? {
            parent_id: input.quote.id,
            quoted_message: {
              id: input.quote.id,
              user_id: input.quote.user_id,
              user_name: displayName(input.quote.user),
              content: input.quote.content.slice(0, 180),
              type: input.quote.type,
              deleted: false,
            },
          }
        : {}),
      ...(threadRoot ? { thread_id: threadRoot.id } : {}),
    };
    let attachmentUrl: string | undefined;
    const attempt = async (): Promise<void> => {
      list.items.set(pendingKey, { msg: draft, pending: { state: 'sending', retry } });
      this.update(list, pendingKey);
      try {
        if (input.file && !attachmentUrl) {
          const up = await this.client.uploadAttachment(input.file, {
            filename: input.file.name,
            mime_type: input.file.type || 'application/octet-stream',
            channel_id: c.info.id,
          });
          attachmentUrl = up.public_url;
        }
        // a draft save still in flight would land after the send and bring the draft back
        await this.draftSaves.get(draftKey(c.info.id, threadRoot?.id));
        const sent = await this.client.sendMessage(c.info.id, {
          content: input.text,
          idempotency_key: key,
          metadata: { client_key: key },
          ...(attachmentUrl ? { attachment_url: attachmentUrl } : {}),
          ...(input.mentions.length ? { mentions: input.mentions } : {}),
          ...(input.quote ? { parent_id: input.quote.id } : {}),
          ...(threadRoot ? { thread_id: threadRoot.id } : {}),
        });
        this.myUserId ??= sent.user?.id;
        this.settle(list, pendingKey, sent);
        // the send took the draft (draft.deleted says so too)
        if (this.drafts.delete(draftKey(c.info.id, threadRoot?.id))) this.renderChannels(this.channelOrder);
      } catch (e) {
        list.items.set(pendingKey, {
          msg: draft,
          pending: { state: 'failed', error: isChatApiError(e) ? e.code : undefined, retry },
        });
        this.update(list, pendingKey);
      }
    };
    const retry = () => void attempt();
    list.order.push(pendingKey);
    const sending = attempt();
    if (this.elOf(list) === this.messagesEl) this.scrollToEnd();
    await sending;
  }

  /** The service's message takes the place of its pending draft (or of nothing, when the event came first). */
  private settle(list: MessageList, pendingKey: string, msg: Message): void {
    const at = list.order.indexOf(pendingKey);
    list.items.delete(pendingKey);
    if (list.has(msg.id)) {
      if (at >= 0) list.order.splice(at, 1);
      list.nodes.get(pendingKey)?.remove();
      list.nodes.delete(pendingKey);
      return;
    }
    list.items.set(msg.id, { msg });
    if (at >= 0) list.order[at] = msg.id;
    else list.order.push(msg.id);
    this.update(list, msg.id, pendingKey);
  }

  // ---- realtime ----

  private listen(): void {
    this.client.on('message.new', (m) => this.onNew(m));
    this.client.on('message.updated', (d) => {
      this.patch(d.id, (m) => {
        if ('reply_count' in d)
          return {
            ...m,
            reply_count: d.reply_count,
            last_reply_at: d.last_reply_at,
            thread_participants: d.thread_participants,
          };
        // a poll's counts or close: this user's own choices stay as their last answer said
        if ('poll' in d) return { ...m, poll: { ...d.poll, my_votes: m.poll?.my_votes ?? [] } };
        // an edit, or the link previews the service found (previews only: content and metadata stand)
        return {
          ...m,
          content: d.content ?? m.content,
          metadata: d.metadata ?? m.metadata,
          edited_at: d.edited_at,
          previews: d.previews,
        };
      });
    });
    this.client.on('message.deleted', (d) => {
      this.patch(d.id, (m) => ({
        ...m,
        content: '',
        attachment: null,
        attachment_url: null,
        deleted_at: d.deleted_at,
        reactions: [],
        ...(m.type === 'poll' ? { poll: null } : {}),
      }));
    });
    const react = (add: boolean) => (d: { message_id: string; user_id: string; emoji: string }) => {
      const byMe = d.user_id === this.myUserId;
      this.patch(d.message_id, (m) => {
        const reactions = m.reactions.map((r) => ({ ...r }));
        const r = reactions.find((x) => x.emoji === d.emoji);
        if (add) {
          if (r) {
            if (byMe && r.reacted_by_me) return m; // our own answer already counted it
            r.count += 1;
            r.reacted_by_me ||= byMe;
          } else reactions.push({ emoji: d.emoji, count: 1, reacted_by_me: byMe });
        } else if (r) {
          if (byMe && !r.reacted_by_me) return m;
          r.count -= 1;
          if (byMe) r.reacted_by_me = false;
        }
        return { ...m, reactions: reactions.filter((x) => x.count > 0) };
      });
    };
    this.client.on('reaction.add', react(true));
    this.client.on('reaction.remove', react(false));
    this.client.on('channel.read', (d, env) => {
      const c = env.channel_id ? this.conversations.get(env.channel_id) : undefined;
      if (!c) return;
      const r = c.receipts.get(d.external_id);
      c.receipts.set(d.external_id, {
        read: d.last_read_at,
        delivered: r && r.delivered > d.last_read_at ? r.delivered : d.last_read_at,
      });
      if (c === this.active && d.external_id !== this.me) this.rerenderMine(c.list);
    });
    // marked unread here or on another of the user's devices: a channel, or a thread
    this.client.on('notification.mark_unread', (d) => {
      const c = this.conversations.get(d.channel_id);
      if (d.thread_id !== null) {
        this.setThreadState(d.thread_id, {
          participant: true,
          unread_replies: d.unread_replies,
          last_read_at: d.last_read_at,
        });
        this.scheduleRefresh();
      } else if (c) this.markedUnread(c, d.unread_count, d.mention_unread_count);
    });
    this.client.on('notification.thread_read', (d) => {
      this.setThreadState(d.thread_id, { unread_replies: d.unread_replies, last_read_at: d.last_read_at });
      this.scheduleRefresh();
    });
    // the user's drafts, saved or taken by a send on any of their devices
    this.client.on('draft.updated', ({ draft }) => {
      this.drafts.set(draftKey(draft.channel_id, draft.thread_id ?? undefined), draft.content);
      this.showDraft(draft.channel_id, draft.thread_id, draft.content);
    });
    this.client.on('draft.deleted', (d) => {
      this.drafts.delete(draftKey(d.channel_id, d.thread_id ?? undefined));
      this.showDraft(d.channel_id, d.thread_id, '');
    });
    // a reminder of the user's came due (on every device of theirs)
    this.client.on('notification.reminder_due', ({ reminder, message }) =>
      this.reminderDue(reminder, message),
    );
    // a scheduled message of the user's was sent, or refused when its time came (CONTRACT §25)
    this.client.on('scheduled.sent', ({ message }) => this.scheduledDone('Sent', excerpt(message)));
    this.client.on('scheduled.failed', ({ error }) => this.scheduledDone('Not sent', error.message));
    this.client.on('typing.start', (d, env) => this.onTyping(env.channel_id, d.external_id, true));
    this.client.on('typing.stop', (d, env) => this.onTyping(env.channel_id, d.external_id, false));
    this.client.on('presence.changed', (d) => {
      this.presence.set(d.external_id, d.online);
      this.renderMembers();
      if (this.active) this.rerenderAuthor(this.active.list, d.external_id);
    });
    for (const name of [
      'channel.created',
      'channel.updated',
      'channel.deleted',
      'member.role_changed',
      'notification.mention',
    ] as const) {
      this.client.on(name, () => this.scheduleRefresh());
    }
    for (const name of ['member.added', 'member.removed'] as const) {
      this.client.on(name, (_d, env) => {
        this.scheduleRefresh();
        if (this.active && env.channel_id === this.active.info.id) void this.loadMembers(this.active);
      });
    }
  }

  private onNew(m: Message): void {
    this.learnMe([m]);
    const c = this.conversations.get(m.channel_id);
    if (!c) return this.scheduleRefresh();
    this.clearTyping(c, m.user?.external_id);
    const fromOther = m.user?.external_id !== this.me;
    if (fromOther) void this.client.markDelivered(c.info.id).catch(() => undefined);
    // a thread reply goes to its open thread, and to the channel only when also sent there
    if (m.thread_id && this.thread?.root.id === m.thread_id) this.addTo(this.thread.list, m);
    if (m.thread_id) this.threadReplyArrived(m, fromOther);
    if (m.thread_id && !m.show_in_channel) return;
    if (c.loaded) {
      const atEnd = this.isAtEnd();
      this.addTo(c.list, m);
      if (c === this.active && (atEnd || !fromOther)) this.scrollToEnd();
    }
    if (c === this.active && fromOther) this.scheduleRead();
    else if (fromOther) this.scheduleRefresh();
  }

  /** Adds a message from the socket, replacing our own pending draft of it (same client key). */
  private addTo(list: MessageList, m: Message): void {
    if (list.has(m.id)) return;
    const key = typeof m.metadata.client_key === 'string' ? `pending:${m.metadata.client_key}` : undefined;
    if (key && list.has(key)) return this.settle(list, key, m);
    list.items.set(m.id, { msg: m });
    list.order.push(m.id);
    this.update(list, m.id);
  }

  private patch(id: string, change: (m: Message) => Message): void {
    const lists = [...this.conversations.values()].map((c) => c.list);
    if (this.thread) {
      lists.push(this.thread.list);
      if (this.thread.root.id === id) {
        this.thread.root = change(this.thread.root);
        this.renderThreadRoot();
      }
    }
    for (const list of lists) {
      const item = list.items.get(id);
      if (!item) continue;
      item.msg = change(item.msg);
      this.update(list, id);
    }
  }

  private rerenderMine(list: MessageList): void {
    for (const [key, item] of list.items)
      if (!item.pending && item.msg.user?.external_id === this.me) this.update(list, key);
  }

  private rerenderAuthor(list: MessageList, externalId: string): void {
    for (const [key, item] of list.items)
      if (item.msg.user?.external_id === externalId) this.update(list, key);
  }

  private onTyping(channelId: string | undefined, who: string, typing: boolean): void {
    const c = channelId ? this.conversations.get(channelId) : undefined;
    if (!c || who === this.me) return;
    clearTimeout(c.typing.get(who));
    if (typing)
      c.typing.set(
        who,
        setTimeout(() => this.clearTyping(c, who), TYPING_TTL_MS),
      );
    else c.typing.delete(who);
    if (c === this.active) this.renderTyping();
  }

  private clearTyping(c: Conversation, who: string | undefined): void {
    if (!who || !c.typing.has(who)) return;
    clearTimeout(c.typing.get(who));
    c.typing.delete(who);
    if (c === this.active) this.renderTyping();
  }

  private renderTyping(): void {
    const who = [...(this.active?.typing.keys() ?? [])];
    this.typingEl.textContent =
      who.length === 0 ? '' : who.length === 1 ? `${who[0]} is typing…` : `${who.join(', ')} are typing…`;
  }

  // ---- actions ----

  private async toggleReaction(m: Message, emoji: string, remove: boolean): Promise<void> {
    try {
      const updated = remove
        ? await this.client.removeReaction(m.id, emoji)
        : await this.client.addReaction(m.id, emoji);
      this.patch(m.id, (old) => ({ ...old, reactions: updated.reactions }));
    } catch (e) {
      this.showError(e);
    }
  }

  private startEdit(list: MessageList, key: string, node: HTMLElement): void {
    const item = list.items.get(key);
    if (!item) return;
    const input = h('input', { class: 'edit-input', value: item.msg.content, 'aria-label': 'Edit message' });
    item.editing = true;
    const done = () => {
      const current = list.items.get(key);
      if (current) current.editing = false;
      this.update(list, key);
      list.nodes.get(key)?.focus();
    };
    const save = async () => {
      const content = input.value.trim();
      if (!content || content === item.msg.content) return done();
      try {
        const updated = await this.client.editMessage(item.msg.id, { content });
        this.patch(updated.id, (m) => ({
          ...m,
          content: updated.content,
          edited_at: updated.edited_at,
          metadata: updated.metadata,
        }));
      } catch (e) {
        this.showError(e);
      }
      done();
    };
    const form = h(
      'form',
      {
        class: 'edit',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void save();
        },
        onkeydown: (e: Event) => {
          if ((e as KeyboardEvent).key === 'Escape') done();
        },
      },
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Save'),
      h('button', { type: 'button', onclick: done }, 'Cancel'),
    );
    node.querySelector('.content')?.replaceWith(form);
    if (!form.isConnected) node.querySelector('.meta')?.after(form);
    input.focus();
    input.select();
  }

  /** Marks the channel unread from this message on; it stays so (its counts show) until it is opened again. */
  private async markUnread(m: Message): Promise<void> {
    const c = this.conversations.get(m.channel_id);
    if (!c) return;
    try {
      clearTimeout(this.readTimers.get(c.info.id));
      this.readTimers.delete(c.info.id);
      const state = await this.client.markUnread(c.info.id, m.id);
      this.markedUnread(c, state.unread_count, state.mention_unread_count);
    } catch (e) {
      this.showError(e);
    }
  }

  private markedUnread(c: Conversation, unread: number, mentions: number): void {
    c.markedUnread = c === this.active;
    c.info.unread_count = unread;
    c.info.mention_unread_count = mentions;
    this.renderChannels(this.channelOrder);
  }

  // ---- polls (CONTRACT §28) ----

  /** Replaces the user's vote (none: withdraws it); the answer carries the counts and their own choices. */
  private async vote(m: Message, optionIds: string[]): Promise<void> {
    try {
      const updated = optionIds.length
        ? await this.client.votePoll(m.id, optionIds)
        : await this.client.withdrawPollVote(m.id);
      this.patch(m.id, (old) => ({ ...old, poll: updated.poll }));
    } catch (e) {
      this.showError(e);
    }
  }

  private async closePoll(m: Message): Promise<void> {
    try {
      const updated = await this.client.closePoll(m.id);
      this.patch(m.id, (old) => ({ ...old, poll: updated.poll }));
    } catch (e) {
      this.showError(e);
    }
  }

  /** The form that posts a poll into the open channel: a question and 2 to 10 options, one per line. */
  private showPollForm(): void {
    const c = this.active;
    const question = h('input', { id: 'poll-question', name: 'question', maxlength: 300, required: true });
    const options = h('textarea', { id: 'poll-options', name: 'options', rows: 4, required: true });
    const multiple = h('input', { type: 'checkbox', id: 'poll-multiple', name: 'multiple_choice' });
    const status = h('p', { class: 'poll-status', role: 'status' });
    const form = h(
      'form',
      {
        class: 'poll-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          if (!c) return;
          void this.client
            .createPoll(c.info.id, {
              question: question.value,
              options: options.value
                .split('\n')
                .map((o) => o.trim())
                .filter(Boolean),
              multiple_choice: multiple.checked,
            })
            .then((m) => {
              this.onNew(m);
              this.closePanel();
            })
            .catch((err: unknown) => (status.textContent = isChatApiError(err) ? err.message : String(err)));
        },
      },
      h('label', { for: 'poll-question' }, c ? 'Question' : 'Open a channel first'),
      question,
      h('label', { for: 'poll-options' }, 'Options, one per line'),
      options,
      h('label', { class: 'inline' }, multiple, ' Voters may choose several'),
      h('button', { type: 'submit', disabled: !c }, 'Post poll'),
      status,
    );
    this.showPanel('New poll', form);
    question.focus();
  }

  private async unsend(m: Message): Promise<void> {
    try {
      const blanked = await this.client.unsendMessage(m.id);
      this.patch(m.id, () => blanked);
    } catch (e) {
      this.showError(e);
    }
  }

  // ---- threads and search (the side panel) ----

  private threadMessages: HTMLOListElement | undefined;
  private threadComposer: Composer | undefined;
  private threadRootEl: HTMLDivElement | undefined;

  private async openThread(root: Message): Promise<void> {
    const c = this.conversations.get(root.channel_id);
    if (!c) return;
    const thread: Thread = { root, list: new MessageList() };
    this.thread = thread;
    this.threadMessages = h('ol', { class: 'messages', 'aria-label': 'Replies' });
    this.threadRootEl = h('div', { class: 'thread-root' });
    this.threadComposer = new Composer({
      key: 'thread',
      label: 'Reply in thread',
      placeholder: 'Reply…',
      members: () => c.members.filter((m) => m !== this.me),
      onSend: (text, mentions, quote, file) =>
        void this.send(c, thread.list, { text, mentions, quote, file }, thread.root),
      onTyping: (typing) => (typing ? this.client.startTyping(c.info.id) : this.client.stopTyping(c.info.id)),
      onDraft: (text) => this.saveDraft(c.info.id, root.id, text),
    });
    this.threadComposer.setText(this.drafts.get(draftKey(c.info.id, root.id)) ?? '');
    this.renderThreadRoot();
    this.showPanel(
      'Thread',
      h('div', { class: 'thread' }, this.threadRootEl, this.threadMessages, this.threadComposer.el),
    );
    this.threadComposer.focus();
    try {
      const page = await this.client.listReplies(root.id, { limit: 100 });
      for (const m of page.messages) {
        thread.list.items.set(m.id, { msg: m });
        thread.list.order.push(m.id);
      }
      thread.list.hasMore = false;
      if (this.thread === thread) this.renderAll(thread.list, this.threadMessages);
      // on screen: read (the root's "new" mark and the channel's thread count go)
      if (page.messages.length) this.markThreadRead(root.id);
    } catch (e) {
      this.showError(e);
    }
  }

  private renderThreadRoot(): void {
    if (!this.thread || !this.threadRootEl) return;
    const m = this.thread.root;
    clear(
      this.threadRootEl,
      h(
        'p',
        { class: 'meta' },
        h('span', { class: 'author' }, displayName(m.user)),
        ' ',
        h('time', { datetime: m.created_at }, shortTime(m.created_at)),
      ),
      h('p', { class: 'content' }, m.deleted_at ? 'This message was unsent' : m.content),
      h('p', { class: 'reply-count' }, `${m.reply_count ?? 0} ${m.reply_count === 1 ? 'reply' : 'replies'}`),
    );
  }

  private markThreadRead(rootId: string): void {
    clearTimeout(this.threadReadTimers.get(rootId));
    this.threadReadTimers.set(
      rootId,
      setTimeout(() => {
        this.threadReadTimers.delete(rootId);
        this.client.markThreadRead(rootId).then(
          (r) => {
            this.setThreadState(rootId, { unread_replies: r.unread_replies, last_read_at: r.last_read_at });
            this.scheduleRefresh();
          },
          (e: unknown) => this.showError(e),
        );
      }, 250),
    );
  }

  /** A reply in a thread: the root's unread replies for this user, as the service counts them. */
  private threadReplyArrived(m: Message, fromOther: boolean): void {
    const rootId = m.thread_id!;
    if (this.thread?.root.id === rootId) {
      if (fromOther) this.markThreadRead(rootId); // on screen
      return;
    }
    const mentionsMe = m.mentions?.some((x) => x.external_id === this.me) ?? false;
    this.patch(rootId, (root) => {
      const t = root.thread;
      if (!t) return root;
      if (!fromOther)
        return { ...root, thread: { participant: true, unread_replies: 0, last_read_at: m.created_at } };
      if (!t.participant && !mentionsMe) return root;
      return { ...root, thread: { ...t, participant: true, unread_replies: t.unread_replies + 1 } };
    });
    if (fromOther) this.scheduleRefresh();
  }

  private setThreadState(rootId: string, state: Partial<NonNullable<Message['thread']>>): void {
    this.patch(rootId, (root) => ({
      ...root,
      thread: { participant: false, unread_replies: 0, last_read_at: null, ...root.thread, ...state },
    }));
  }

  // ---- drafts ----

  private async loadDrafts(): Promise<void> {
    try {
      let before: string | undefined;
      do {
        const page = await this.client.listMyDrafts({ limit: 100, ...(before ? { before } : {}) });
        for (const d of page.drafts)
          this.drafts.set(draftKey(d.channel_id, d.thread_id ?? undefined), d.content);
        before = page.next_cursor ?? undefined;
      } while (before);
    } catch (e) {
      this.showError(e);
    }
  }

  /** Saves what a composer holds as the scope's draft (empty: deletes it), one save at a time per scope. */
  private saveDraft(channelId: string, threadId: string | undefined, text: string): void {
    const key = draftKey(channelId, threadId);
    const save = (this.draftSaves.get(key) ?? Promise.resolve())
      .then(async () => {
        const saved = await this.client.saveDraft(channelId, {
          content: text,
          ...(threadId ? { thread_id: threadId } : {}),
        });
        if (saved) this.drafts.set(key, saved.content);
        else this.drafts.delete(key);
        if (!threadId) this.renderChannels(this.channelOrder);
      })
      .catch((e: unknown) => this.showError(e));
    this.draftSaves.set(key, save);
    void save.then(() => {
      if (this.draftSaves.get(key) === save) this.draftSaves.delete(key);
    });
  }

  /** A draft saved or deleted on another device shows here, unless the user is typing in that composer. */
  private showDraft(channelId: string, threadId: string | null, text: string): void {
    if (
      !threadId &&
      this.active?.info.id === channelId &&
      !this.composer.focused &&
      this.composer.text !== text
    )
      this.composer.setText(text);
    if (threadId && this.thread?.root.id === threadId && this.threadComposer && !this.threadComposer.focused)
      this.threadComposer.setText(text);
    this.renderChannels(this.channelOrder);
  }

  // ---- reminders (CONTRACT §25) ----

  /** The form that sets a reminder about `m`: a time (to the second), or saved for later. */
  private showReminderForm(m: Message): void {
    const at = h('input', {
      type: 'datetime-local',
      id: 'remind-at',
      name: 'remind_at',
      step: 1,
      required: true,
    });
    const inAnHour = new Date(Date.now() + 3600_000);
    at.value = localInputValue(inAnHour);
    const status = h('p', { class: 'reminder-status', role: 'status' });
    const set = async (remindAt: string | null) => {
      try {
        const body = { remind_at: remindAt };
        const r = await this.client.createReminder(m.id, body).catch((e: unknown) => {
          if (isChatApiError(e) && e.code === 'REMINDER_EXISTS')
            return this.client.updateReminder(m.id, body);
          throw e;
        });
        status.textContent = r.remind_at ? `Reminder set for ${shortTime(r.remind_at)}` : 'Saved for later';
      } catch (e) {
        status.textContent = isChatApiError(e) ? e.message : String(e);
      }
    };
    const form = h(
      'form',
      {
        class: 'reminder-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void set(new Date(at.value).toISOString());
        },
      },
      h('p', { class: 'quote' }, excerpt(m)),
      h('label', { for: 'remind-at' }, 'Remind me at'),
      at,
      h('button', { type: 'submit' }, 'Set reminder'),
      h('button', { type: 'button', onclick: () => void set(null) }, 'Save for later'),
      status,
    );
    this.showPanel('Remind me', form);
    at.focus();
  }

  /** The user's reminders: due ones first, then upcoming, then saved. */
  private async showReminders(): Promise<void> {
    const list = h('ol', { class: 'reminders', 'aria-label': 'Your reminders' });
    this.showPanel('Reminders', list);
    this.dueReminders = 0;
    this.remindersButton.textContent = 'Reminders';
    try {
      const groups = await Promise.all(
        (['due', 'upcoming', 'saved'] as const).map((filter) =>
          this.client.listMyReminders({ filter, limit: 50 }),
        ),
      );
      const all = groups.flatMap((g) => g.reminders);
      if (!all.length) append(list, h('li', {}, 'No reminders.'));
      append(
        list,
        all.map((r) =>
          h(
            'li',
            { class: `reminder ${r.status}`, 'data-reminder': r.id },
            h(
              'span',
              { class: 'meta' },
              r.status === 'due'
                ? `Due ${shortTime(r.fired_at!)}`
                : r.status === 'upcoming'
                  ? `At ${shortTime(r.remind_at!)}`
                  : 'Saved',
            ),
            h('span', { class: 'content' }, excerpt(r.message)),
            h(
              'button',
              {
                type: 'button',
                onclick: () =>
                  void this.client
                    .deleteReminder(r.message_id)
                    .then(() => this.showReminders())
                    .catch((e: unknown) => this.showError(e)),
              },
              'Delete',
            ),
          ),
        ),
      );
    } catch (e) {
      this.showError(e);
    }
  }

  private reminderDue(reminder: Reminder, message: Message): void {
    this.dueReminders++;
    this.remindersButton.textContent = `Reminders (${this.dueReminders} due)`;
    const c = this.conversations.get(reminder.channel_id);
    clear(
      this.reminderToast,
      h('strong', {}, 'Reminder: '),
      h('span', { class: 'content' }, excerpt(message)),
      c ? h('button', { type: 'button', onclick: () => void this.open(c, true) }, 'Open') : null,
      h('button', { type: 'button', onclick: () => (this.reminderToast.hidden = true) }, 'Dismiss'),
    );
    this.reminderToast.hidden = false;
  }

  // ---- scheduled messages (CONTRACT §25) ----

  /** The form that schedules a message into the open channel, and the user's scheduled messages. */
  private async showScheduled(): Promise<void> {
    const c = this.active;
    const content = h('textarea', { id: 'schedule-content', name: 'content', rows: 3, required: true });
    const at = h('input', {
      type: 'datetime-local',
      id: 'schedule-at',
      name: 'scheduled_at',
      step: 1,
      required: true,
    });
    at.value = localInputValue(new Date(Date.now() + 3600_000));
    const status = h('p', { class: 'schedule-status', role: 'status' });
    const list = h('ol', { class: 'scheduled', 'aria-label': 'Your scheduled messages' });
    const form = h(
      'form',
      {
        class: 'schedule-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          if (!c) return;
          void this.client
            .scheduleMessage(c.info.id, {
              content: content.value,
              scheduled_at: new Date(at.value).toISOString(),
            })
            .then(({ scheduled_message: sm }) => {
              status.textContent = sm ? `Scheduled for ${shortTime(sm.scheduled_at)}` : 'Sent already';
              content.value = '';
              return this.listScheduled(list);
            })
            .catch((err: unknown) => (status.textContent = isChatApiError(err) ? err.message : String(err)));
        },
      },
      h(
        'label',
        { for: 'schedule-content' },
        c ? `Message to ${c.info.name ?? c.info.external_id}` : 'Open a channel first',
      ),
      content,
      h('label', { for: 'schedule-at' }, 'Send at'),
      at,
      h('button', { type: 'submit', disabled: !c }, 'Schedule'),
      status,
    );
    this.showPanel('Send later', h('div', {}, form, h('h3', {}, 'Scheduled'), list));
    content.focus();
    await this.listScheduled(list);
  }

  /** The user's scheduled messages, soonest first: pending, or failed with the reason. */
  private async listScheduled(list: HTMLOListElement): Promise<void> {
    try {
      const page = await this.client.listMyScheduledMessages({ limit: 50 });
      clear(list);
      if (!page.scheduled_messages.length) append(list, h('li', {}, 'Nothing scheduled.'));
      append(
        list,
        page.scheduled_messages.map((sm: ScheduledMessage) =>
          h(
            'li',
            { class: `scheduled-message ${sm.status}`, 'data-scheduled': sm.id },
            h(
              'span',
              { class: 'meta' },
              sm.status === 'failed'
                ? `Not sent (${sm.error?.message ?? 'refused'})`
                : `At ${shortTime(sm.scheduled_at)} in ${this.conversations.get(sm.channel_id)?.info.name ?? sm.channel_external_id}`,
            ),
            h('span', { class: 'content' }, sm.content),
            h(
              'button',
              {
                type: 'button',
                onclick: () =>
                  void this.client
                    .cancelScheduledMessage(sm.id)
                    .then(() => this.listScheduled(list))
                    .catch((e: unknown) => this.showError(e)),
              },
              'Cancel',
            ),
          ),
        ),
      );
    } catch (e) {
      this.showError(e);
    }
  }

  /** A scheduled message was sent or refused: said on every browser of the user; an open list follows. */
  private scheduledDone(what: string, detail: string): void {
    clear(
      this.reminderToast,
      h('strong', {}, `${what}: `),
      h('span', { class: 'content' }, detail),
      h('button', { type: 'button', onclick: () => (this.reminderToast.hidden = true) }, 'Dismiss'),
    );
    this.reminderToast.hidden = false;
    const list = this.panel.querySelector<HTMLOListElement>('ol.scheduled');
    if (list && !this.panel.hidden) void this.listScheduled(list);
  }

  private async search(q: string): Promise<void> {
    const results = h('ol', { class: 'results', 'aria-label': `Results for ${q}` });
    this.showPanel(`Search: ${q}`, results);
    try {
      const page = await this.client.searchMessages({ q, limit: 25 });
      if (!page.messages.length) append(results, h('li', {}, 'No messages match.'));
      append(
        results,
        page.messages.map((hit) => this.renderHit(hit)),
      );
    } catch (e) {
      this.showError(e);
    }
  }

  private renderHit(hit: SearchHit): HTMLElement {
    const c = this.conversations.get(hit.channel_id);
    return h(
      'li',
      { class: 'hit' },
      h(
        'button',
        {
          type: 'button',
          class: 'hit-button',
          onclick: () => {
            if (c) void this.open(c, true);
          },
        },
        h(
          'span',
          { class: 'meta' },
          `${c ? this.channelName(c.info) : 'channel'} · ${displayName(hit.user)} · ${shortTime(hit.created_at)}`,
        ),
        h('span', { class: 'content' }, ...highlighted(hit.content, hit.highlights)),
        hit.attachment && hit.type === 'image'
          ? h('img', { src: hit.attachment.url, alt: hit.attachment.filename, class: 'hit-image' })
          : null,
      ),
    );
  }

  private showPanel(title: string, content: HTMLElement): void {
    clear(
      this.panel,
      h(
        'header',
        {},
        h('h2', { id: 'panel-title' }, title),
        h('button', { type: 'button', onclick: () => this.closePanel() }, 'Close'),
      ),
      content,
    );
    this.panel.hidden = false;
    this.shell.dataset.panel = 'open';
  }

  private closePanel(): void {
    this.panel.hidden = true;
    delete this.shell.dataset.panel;
    this.thread = undefined;
    this.threadMessages = undefined;
    this.threadComposer = undefined;
  }

  private async reloadAll(): Promise<void> {
    for (const c of this.conversations.values()) {
      c.list = new MessageList();
      c.loaded = false;
    }
    const active = this.active;
    await this.refreshChannels();
    if (active) await this.open(active, false);
  }
}

/** A message in a line: its first 80 characters, or what it was. */
function excerpt(m: Message): string {
  if (m.deleted_at) return '(unsent)';
  const text = m.content.trim() || (m.attachment ? m.attachment.filename : '');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A time as a datetime-local input shows it, in the browser's zone, to the second. */
function localInputValue(t: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
}

/** A draft's scope: the channel, or one of its threads. */
function draftKey(channelId: string, threadId?: string): string {
  return threadId ? `${channelId}:${threadId}` : channelId;
}
