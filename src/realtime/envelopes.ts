import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { StoredEvent } from '../events/event-types';
import type { MessageView } from '../contract/events';
import type { AnyEnvelope, Envelope, ServerEventMap, ServerEventName } from '../contract/realtime';
import { MessageViews } from '../messages/message-view.service';
import { isoNotNull } from '../common/time';

/** Events whose envelope carries the message rendered at delivery. */
const RENDERED: ReadonlySet<string> = new Set(['message.created', 'message.pinned', 'message.unpinned']);

/** The message an event is about (the realtime publisher leaves its author's blockers out). */
export function messageIdOf(e: StoredEvent): string | null {
  switch (e.type) {
    case 'message.created':
    case 'message.updated':
    case 'message.deleted':
    case 'thread.updated':
    case 'poll.updated':
    case 'message.pinned':
    case 'message.unpinned':
      return e.payload.message.id;
    case 'message.reaction.added':
    case 'message.reaction.removed':
      return e.payload.reaction.message_id;
    case 'message.mentioned':
      return e.payload.message_id;
    case 'notification.mark_unread':
      return e.payload.message_id ?? e.payload.thread_id;
    case 'notification.thread_read':
      return e.payload.thread_id;
    case 'message.moderated':
    case 'message.flagged':
      return e.payload.message_id ?? null;
    case 'poll.voted':
    case 'poll.closed':
      return e.payload.message_id;
    case 'user.created':
    case 'user.banned':
    case 'user.unbanned':
    case 'user.flagged':
    case 'channel.created':
    case 'channel.updated':
    case 'channel.deleted':
    case 'channel.read':
    case 'channel.state_changed':
    case 'draft.updated':
    case 'draft.deleted':
    case 'notification.reminder_due':
    case 'reminder.due':
    case 'scheduled.sent':
    case 'scheduled.failed':
    case 'member.joined':
    case 'member.left':
    case 'member.role_changed':
      return null;
  }
}

/** An event's envelope: a channel event carries its channel and seq; `about` names the channel of a user-scoped one. */
function envelope<K extends ServerEventName>(
  e: StoredEvent,
  type: K,
  data: ServerEventMap[K],
  about?: string,
): Envelope<K> {
  const channelId = e.channel_id ?? about;
  return {
    v: 1,
    type,
    ...(channelId ? { channel_id: channelId } : {}),
    ...(e.seq !== null ? { seq: Number(e.seq) } : {}),
    data,
    ts: isoNotNull(e.created_at),
  };
}

/**
 * Turns log events into the envelopes clients receive. Realtime and sync both use it, so a client that
 * catches up sees exactly the shapes it would have seen live. `message.new` carries the message as
 * history renders it; it is rendered once per event without a viewer: a new message has no reactions
 * yet, so `reacted_by_me` is false for everyone, and blocks are applied by leaving blockers out.
 * `message.pinned` / `message.unpinned` carry the message rendered the same way, with the pin state
 * the event announced (so a catch-up shows what each event changed, and an unsent message blanked).
 */
@Injectable()
export class EnvelopeBuilder {
  constructor(
    private readonly db: DataSource,
    private readonly views: MessageViews,
  ) {}

  /** One envelope per event (null where the event has no realtime form), events of one workspace. */
  async build(
    events: StoredEvent[],
    viewerId: string | null,
    m: EntityManager = this.db.manager,
  ): Promise<(AnyEnvelope | null)[]> {
    const ids = events.filter((e) => RENDERED.has(e.type)).map((e) => messageIdOf(e)!);
    const rendered = ids.length
      ? await this.messages(events[0]!.workspace_id, ids, viewerId, m)
      : new Map<string, MessageView>();
    return events.map((e) => this.one(e, rendered));
  }

  async messages(
    workspaceId: string,
    ids: string[],
    viewerId: string | null,
    m: EntityManager = this.db.manager,
  ): Promise<Map<string, MessageView>> {
    // an envelope is the same live and in sync: no viewer's thread read state (CONTRACT §23)
    const views = await this.views.render(m, { workspaceId, userId: viewerId, broadcast: true }, ids);
    // a shadowed message reaches only its author here, who must not learn of the shadow ban
    return new Map(views.map(({ shadowed: _, ...v }) => [v.id, v]));
  }

  one(e: StoredEvent, rendered: Map<string, MessageView>): AnyEnvelope | null {
    switch (e.type) {
      case 'message.created': {
        const view = rendered.get(e.payload.message.id);
        return view ? envelope(e, 'message.new', view) : null; // null: the channel (and so the message) is gone
      }
      case 'message.updated':
      case 'thread.updated': // a root's counters
      case 'poll.updated': // a poll's counts or close
        return envelope(e, 'message.updated', e.payload.message);
      case 'message.deleted':
        return envelope(e, 'message.deleted', e.payload.message);
      case 'message.pinned':
      case 'message.unpinned': {
        const { message } = e.payload;
        const view = rendered.get(message.id);
        if (!view) return null;
        return envelope(e, e.type, {
          message: { ...view, pinned_at: message.pinned_at, pinned_by: message.pinned_by },
        });
      }
      case 'message.reaction.added':
        return envelope(e, 'reaction.add', e.payload.reaction);
      case 'message.reaction.removed':
        return envelope(e, 'reaction.remove', e.payload.reaction);
      case 'channel.read': {
        const { user_id, external_id, last_read_at } = e.payload;
        return envelope(e, 'channel.read', {
          channel_id: e.channel_id ?? e.payload.channel_id,
          user_id,
          external_id,
          last_read_at,
        });
      }
      case 'channel.created':
      case 'channel.updated':
      case 'channel.deleted':
        return envelope(e, e.type, e.payload);
      case 'message.mentioned':
        return envelope(e, 'message.mentioned', e.payload);
      // user-scoped events about a channel name it like notification.mention does (no seq): a user's
      // channel state, and a large channel's member events (CONTRACT §29)
      case 'member.joined':
        return envelope(e, 'member.added', e.payload, e.payload.channel_id);
      case 'member.left':
        return envelope(e, 'member.removed', e.payload, e.payload.channel_id);
      case 'member.role_changed':
        return envelope(e, 'member.role_changed', e.payload, e.payload.channel_id);
      case 'channel.state_changed':
        return envelope(e, 'channel.state_changed', e.payload, e.payload.channel_id);
      case 'notification.mark_unread':
        return envelope(e, 'notification.mark_unread', e.payload, e.payload.channel_id);
      case 'notification.thread_read':
        return envelope(e, 'notification.thread_read', e.payload, e.payload.channel_id);
      case 'draft.updated':
        return envelope(e, 'draft.updated', e.payload, e.payload.draft.channel_id);
      case 'draft.deleted':
        return envelope(e, 'draft.deleted', e.payload, e.payload.channel_id);
      case 'notification.reminder_due':
        return envelope(e, 'notification.reminder_due', e.payload, e.payload.reminder.channel_id);
      case 'scheduled.sent':
        return envelope(e, 'scheduled.sent', e.payload, e.payload.message.channel_id);
      case 'scheduled.failed':
        return envelope(e, 'scheduled.failed', e.payload);
      case 'user.created': // webhook-only events have no realtime form
      case 'reminder.due':
      case 'poll.voted':
      case 'poll.closed':
      case 'user.banned':
      case 'user.unbanned':
      case 'user.flagged':
      case 'message.flagged':
      case 'message.moderated':
        return null;
    }
  }
}
