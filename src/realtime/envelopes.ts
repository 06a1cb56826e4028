import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { PinPayload, StoredEvent } from '../events/event-types';
import { MessageView, MessageViews } from '../messages/message-view.service';
import { isoNotNull } from '../common/time';
import { Envelope, REALTIME_NAME } from './realtime-events';

/** Events whose envelope carries the message rendered at delivery. */
const RENDERED: ReadonlySet<string> = new Set(['message.created', 'message.pinned', 'message.unpinned']);

const USER_SCOPED_ABOUT_A_CHANNEL: ReadonlySet<string> = new Set(['channel.state_changed', 'member.added', 'member.removed', 'member.role_changed']);

/** The message an event is about, and its author (for block filtering). */
export function messageIdOf(e: StoredEvent): string | null {
  const p = e.payload as { message?: { id?: string }; reaction?: { message_id?: string }; message_id?: string };
  return p.message?.id ?? p.reaction?.message_id ?? p.message_id ?? null;
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
  async build(events: StoredEvent[], viewerId: string | null, m: EntityManager = this.db.manager): Promise<(Envelope | null)[]> {
    const ids = events.filter((e) => RENDERED.has(e.type)).map((e) => messageIdOf(e)!);
    const rendered = ids.length ? await this.messages(events[0]!.workspace_id, ids, viewerId, m) : new Map<string, MessageView>();
    return events.map((e) => this.one(e, rendered));
  }

  async messages(workspaceId: string, ids: string[], viewerId: string | null, m: EntityManager = this.db.manager): Promise<Map<string, MessageView>> {
    const views = await this.views.render(m, { workspaceId, userId: viewerId }, ids);
    // a shadowed message reaches only its author here, who must not learn of the shadow ban
    return new Map(views.map(({ shadowed: _, ...v }) => [v.id, v]));
  }

  one(e: StoredEvent, rendered: Map<string, MessageView>): Envelope | null {
    const type = REALTIME_NAME[e.type];
    if (!type) return null;
    const p = e.payload;
    let data: unknown;
    switch (type) {
      case 'message.new': {
        const view = rendered.get(messageIdOf(e)!);
        if (!view) return null; // the channel (and so the message) is gone
        data = view;
        break;
      }
      case 'message.updated': // an edit, or (from thread.updated) a root's counters
      case 'message.deleted':
        data = p.message;
        break;
      case 'message.pinned':
      case 'message.unpinned': {
        const { message } = p as unknown as PinPayload;
        const view = rendered.get(message.id);
        if (!view) return null;
        data = { message: { ...view, pinned_at: message.pinned_at, pinned_by: message.pinned_by } };
        break;
      }
      case 'reaction.add':
      case 'reaction.remove':
        data = p.reaction;
        break;
      case 'channel.read': {
        const { user_id, external_id, last_read_at } = p as { user_id: string; external_id: string; last_read_at: string };
        data = { channel_id: e.channel_id, user_id, external_id, last_read_at };
        break;
      }
      case 'channel.created':
      case 'channel.updated':
      case 'channel.deleted':
      case 'member.added':
      case 'member.removed':
      case 'member.role_changed':
      case 'message.mentioned':
      case 'channel.state_changed':
      case 'notification.mention':
      case 'presence.changed':
      case 'presence.batch':
      case 'typing.start':
      case 'typing.stop':
        data = p;
    }
    // a user-scoped event about a channel names it like notification.mention does (no seq): a user's
    // channel state, and a large channel's member events (CONTRACT §29)
    const channelId = e.channel_id ?? (USER_SCOPED_ABOUT_A_CHANNEL.has(type) ? (p as { channel_id?: string }).channel_id : undefined);
    return {
      v: 1,
      type,
      ...(channelId ? { channel_id: channelId } : {}),
      ...(e.seq !== null ? { seq: Number(e.seq) } : {}),
      data,
      ts: isoNotNull(e.created_at),
    };
  }
}
