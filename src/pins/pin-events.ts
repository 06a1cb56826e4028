import type { PinPayload } from '../contract/events';
import type { MessageView } from '../contract/events';
import { broadcastPoll } from '../messages/message-view.service';

/**
 * The data of `message.pinned` / `message.unpinned` (realtime and webhooks): the message as rendered
 * in the transaction that changed its pin, without a viewer, since every subscriber reads the same
 * payload (realtime and sync re-render the message for delivery and keep this pin state).
 */
export function pinPayload(view: MessageView): PinPayload {
  return {
    message: {
      ...view,
      reactions: view.reactions.map((r) => ({ ...r, reacted_by_me: false })),
      ...(view.poll ? { poll: broadcastPoll(view.poll) } : {}),
    },
  };
}
