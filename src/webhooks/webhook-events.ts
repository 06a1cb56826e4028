import type { DomainEventType } from '../contract/events';

/**
 * The webhook event names of SPEC.md (plus `channel.updated`, which the event log also records, and
 * CONTRACT §16's `message.pinned` / `message.unpinned`, §19's `message.flagged` / `user.flagged`). An event-log row whose type is one of these
 * is delivered with its payload as `data`; other log types (realtime-only ones such as
 * `channel.read`) are never offered to webhooks.
 */
export const WEBHOOK_EVENTS = [
  'message.created',
  'message.updated',
  'message.deleted',
  'message.pinned',
  'message.unpinned',
  'message.reaction.added',
  'message.reaction.removed',
  'message.mentioned',
  'message.moderated',
  'message.flagged',
  'user.flagged',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'member.joined',
  'member.left',
  'user.created',
  'user.banned',
  'user.unbanned',
  'reminder.due',
  'poll.voted',
  'poll.closed',
] as const satisfies readonly DomainEventType[];

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const NAMES: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);

export function isWebhookEvent(type: string): type is WebhookEvent {
  return NAMES.has(type);
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'permanently_failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const SIGNING_MODES = ['signing_secret', 'api_secret'] as const;
export type SigningMode = (typeof SIGNING_MODES)[number];
