import type { LinkPreview, Message } from '@chat-service/client';
import { h, shortTime } from './dom';
import { contentNodes, displayName, fileSize } from './format';

/** A message as shown: the service's, or one still being sent (or that failed) under its idempotency key. */
export interface Item {
  msg: Message;
  /** Being edited in place: re-renders wait until the edit ends (they would take the input away). */
  editing?: boolean;
  pending?: { state: 'sending' | 'failed'; error?: string; retry: () => void };
}

/** A list of messages in display order (oldest first), keyed by message id or, while pending, `pending:<key>`. */
export class MessageList {
  readonly items = new Map<string, Item>();
  readonly order: string[] = [];
  readonly nodes = new Map<string, HTMLElement>();
  cursor: string | null = null;
  hasMore = true;
  loading = false;

  has(key: string): boolean {
    return this.items.has(key);
  }
}

const QUICK_REACTIONS = ['👍', '❤️', '😂', '🎉'];

/** What rendering a message needs from the app: who is looking, and what its buttons do. */
export interface MessageContext {
  /** The signed-in user's external id. */
  me: string;
  /** Whether the list is a thread's (no Thread button, no "in a thread" note). */
  inThread: boolean;
  online(externalId: string): boolean | undefined;
  /** The read and delivered cursors of the channel's other members (empty when unknown). */
  otherReceipts(channelId: string): { read: string; delivered: string }[];
  react(m: Message, emoji: string, remove: boolean): void;
  quote(m: Message): void;
  openThread(m: Message): void;
  edit(list: MessageList, key: string, node: HTMLElement): void;
  unsend(m: Message): void;
  /** Mark the channel unread from this message on. */
  markUnread(m: Message): void;
  /** Set a reminder about this message (CONTRACT §25). */
  remind(m: Message): void;
  /** Replace the user's vote in a poll with these options ([] withdraws it). */
  vote(m: Message, optionIds: string[]): void;
  closePoll(m: Message): void;
}

export function renderMessage(list: MessageList, key: string, ctx: MessageContext): HTMLElement {
  const item = list.items.get(key)!;
  const m = item.msg;
  const mine = m.user?.external_id === ctx.me;
  const deleted = !!m.deleted_at;
  const inThread = ctx.inThread;
  const author = m.user?.external_id;
  const online = author ? ctx.online(author) : undefined;

  const body: (Node | null)[] = [];
  if (m.quoted_message) {
    const q = m.quoted_message;
    body.push(
      h(
        'blockquote',
        { class: 'quoted' },
        h('strong', {}, q.user_name ?? nameOf(list, q.user_id)),
        ': ',
        q.deleted ? h('em', {}, 'unsent') : q.content,
      ),
    );
  }
  if (deleted) body.push(h('p', { class: 'content deleted' }, 'This message was unsent'));
  else if (m.content) body.push(h('p', { class: 'content' }, ...contentNodes(m, ctx.me)));
  if (!deleted && m.attachment) {
    const a = m.attachment;
    body.push(
      m.type === 'image'
        ? h(
            'figure',
            { class: 'attachment' },
            h('img', { src: a.url, alt: a.filename, loading: 'lazy' }),
            h('figcaption', {}, a.filename),
          )
        : h(
            'a',
            { class: 'attachment file', href: a.url, target: '_blank', rel: 'noopener' },
            `📄 ${a.filename} (${fileSize(a.size_bytes)})`,
          ),
    );
  } else if (!deleted && m.attachment_url && item.pending) {
    body.push(h('p', { class: 'attachment uploading' }, 'Uploading…'));
  }
  if (!deleted) body.push(...(m.previews ?? []).map(previewCard));
  if (!deleted && m.poll && !item.pending) body.push(pollView(m, m.poll, mine, ctx));

  const reactions = deleted
    ? null
    : h(
        'div',
        { class: 'reactions' },
        m.reactions.map((r) =>
          h(
            'button',
            {
              type: 'button',
              class: 'reaction',
              'aria-pressed': String(r.reacted_by_me),
              'aria-label': `${r.emoji} ${r.count}${r.reacted_by_me ? ', including you' : ''}`,
              onclick: () => ctx.react(m, r.emoji, r.reacted_by_me),
            },
            `${r.emoji} ${r.count}`,
          ),
        ),
      );

  const actions: HTMLElement[] = [];
  if (!item.pending && !deleted && m.type !== 'system') {
    for (const emoji of QUICK_REACTIONS) {
      const mineAlready = m.reactions.some((r) => r.emoji === emoji && r.reacted_by_me);
      if (!mineAlready)
        actions.push(
          h(
            'button',
            {
              type: 'button',
              class: 'icon',
              'aria-label': `React with ${emoji}`,
              onclick: () => ctx.react(m, emoji, false),
            },
            emoji,
          ),
        );
    }
    actions.push(
      h(
        'button',
        {
          type: 'button',
          onclick: () => ctx.quote(m),
        },
        'Reply',
      ),
    );
    if (!inThread && !m.thread_id)
      actions.push(h('button', { type: 'button', onclick: () => ctx.openThread(m) }, 'Thread'));
    if (mine) {
      actions.push(
        h(
          'button',
          {
            type: 'button',
            onclick: (e: Event) => ctx.edit(list, key, (e.target as HTMLElement).closest('li')!),
          },
          'Edit',
        ),
      );
      actions.push(h('button', { type: 'button', onclick: () => ctx.unsend(m) }, 'Unsend'));
    } else if (!inThread) {
      actions.push(h('button', { type: 'button', onclick: () => ctx.markUnread(m) }, 'Mark unread'));
    }
    actions.push(h('button', { type: 'button', onclick: () => ctx.remind(m) }, 'Remind me'));
  }

  // the viewer's unread replies in the thread (CONTRACT §23), when they take part in it
  const fresh = !inThread ? (m.thread?.unread_replies ?? 0) : 0;
  const replies = m.reply_count
    ? h(
        'button',
        { type: 'button', class: 'link thread-link', onclick: () => ctx.openThread(m) },
        `${m.reply_count} ${m.reply_count === 1 ? 'reply' : 'replies'}`,
        fresh ? h('span', { class: 'badge thread-unread' }, `${fresh} new`) : null,
      )
    : null;

  let state: HTMLElement | null = null;
  if (item.pending?.state === 'sending') state = h('span', { class: 'pending' }, 'Sending…');
  else if (item.pending?.state === 'failed')
    state = h(
      'span',
      { class: 'failed' },
      `Not sent${item.pending.error ? `: ${item.pending.error}` : ''} `,
      h('button', { type: 'button', onclick: item.pending.retry }, 'Retry'),
    );
  else if (mine && !deleted) state = tick(m, ctx.otherReceipts(m.channel_id));

  return h(
    'li',
    {
      class: `msg${mine ? ' mine' : ''}${m.type === 'system' ? ' system' : ''}${item.pending ? ` ${item.pending.state}` : ''}`,
      'data-id': m.id,
      'data-key': key,
      // a tap (or click) focuses the message, which shows its actions on touch screens too
      tabindex: -1,
    },
    h(
      'div',
      { class: 'meta' },
      author
        ? h('span', {
            class: `dot ${online ? 'online' : 'offline'}`,
            role: 'img',
            'aria-label': online ? 'online' : 'offline',
          })
        : null,
      h('span', { class: 'author' }, displayName(m.user)),
      h('time', { datetime: m.created_at }, shortTime(m.created_at)),
      m.edited_at && !deleted ? h('span', { class: 'edited' }, '(edited)') : null,
      m.thread_id && !inThread ? h('span', { class: 'edited' }, '(in a thread)') : null,
    ),
    body,
    reactions,
    replies,
    h(
      'div',
      { class: 'footer' },
      actions.length
        ? h('div', { class: 'actions', role: 'group', 'aria-label': 'Message actions' }, actions)
        : null,
      state,
    ),
  );
}

/** A user's name or external id, from a message of theirs in the list. */
function nameOf(list: MessageList, userId: string | null): string {
  for (const { msg } of list.items.values())
    if (userId && msg.user?.id === userId) return displayName(msg.user);
  return 'someone';
}

/** ✓ sent, ✓✓ delivered, blue ✓✓ read: by every other member's cursors when known, else the service's word. */
function tick(m: Message, others: { read: string; delivered: string }[]): HTMLElement {
  let status = m.receipt_status;
  if (others.length) {
    if (others.every((r) => r.read >= m.created_at)) status = 'read';
    else if (others.every((r) => r.delivered >= m.created_at) && status === 'sent') status = 'delivered';
  }
  const label = status === 'read' ? 'Read' : status === 'delivered' ? 'Delivered' : 'Sent';
  return h(
    'span',
    { class: `tick ${status}`, role: 'img', 'aria-label': label, title: label },
    status === 'sent' ? '✓' : '✓✓',
  );
}

/**
 * A link's preview, as the service found it: a card that opens the link. Without its image: loading it
 * would tell the linked site who reads the channel (an app would show it through an image proxy), and
 * the page's policy loads images only from here and the attachment store.
 */
function previewCard(p: LinkPreview): HTMLElement {
  return h(
    'a',
    { class: 'link-preview', href: p.url, target: '_blank', rel: 'noopener noreferrer' },
    h('span', { class: 'site' }, p.site_name ?? new URL(p.url).host),
    h('strong', { class: 'title' }, p.title),
    p.description ? h('span', { class: 'description' }, p.description) : null,
  );
}

/**
 * A poll: an option is a toggle button with its count (single choice: choosing one replaces the other;
 * choosing it again withdraws), the totals, and for its creator a button that closes it.
 */
function pollView(
  m: Message,
  poll: NonNullable<Message['poll']>,
  mine: boolean,
  ctx: MessageContext,
): HTMLElement {
  const chosen = poll.my_votes ?? [];
  const choose = (id: string): string[] => {
    if (chosen.includes(id)) return chosen.filter((x) => x !== id);
    return poll.multiple_choice ? [...chosen, id] : [id];
  };
  return h(
    'div',
    { class: `poll${poll.closed ? ' closed' : ''}`, role: 'group', 'aria-label': `Poll: ${poll.question}` },
    h(
      'ul',
      { class: 'poll-options' },
      poll.options.map((o) =>
        h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'poll-option',
              'aria-pressed': String(chosen.includes(o.id)),
              'aria-label': `${o.text}: ${o.vote_count} ${o.vote_count === 1 ? 'vote' : 'votes'}`,
              disabled: poll.closed,
              onclick: () => ctx.vote(m, choose(o.id)),
            },
            h('span', { class: 'text' }, o.text),
            h('span', { class: 'count' }, String(o.vote_count)),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'poll-meta' },
      `${poll.voter_count} ${poll.voter_count === 1 ? 'voter' : 'voters'}`,
      poll.multiple_choice ? ' · several choices' : '',
      poll.closed ? ' · Closed' : '',
    ),
    mine && !poll.closed
      ? h('button', { type: 'button', class: 'close-poll', onclick: () => ctx.closePoll(m) }, 'Close poll')
      : null,
  );
}
