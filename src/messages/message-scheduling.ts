import type { EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import type { MessageView, ScheduledMessageView } from '../contract/events';
import type { SendMessageDto } from './dto/send-message.dto';

export interface ScheduleResult {
  /** Null when the idempotency key names a message already sent (`message`). */
  scheduled_message: ScheduledMessageView | null;
  /** The message the key names when it was sent already (a retry after the scheduled time). */
  message?: MessageView;
  /** The idempotency key named a scheduled or sent message already: answer it with 200. */
  replayed: boolean;
}

/**
 * A send with `scheduled_at` (CONTRACT §25): kept until then instead of sent. The scheduled feature
 * binds it (ScheduledMessagesModule), so the send routes depend on this seam and not on that feature.
 */
export abstract class MessageScheduling {
  abstract schedule(p: WorkspacePrincipal, channelRef: string, dto: SendMessageDto): Promise<ScheduleResult>;
}

/**
 * A scheduled message firing: its send runs the send's checks as its author's (the rate limit and slow
 * mode aside), and its two steps join the send's transaction, so it is sent exactly once or not at all.
 */
export interface ScheduledSend {
  /** Before the message: takes the scheduled message out; throws (rolling the send back) when it was changed or cancelled meanwhile. */
  take(m: EntityManager): Promise<void>;
  /** After it: the author's `scheduled.sent`, with the message as they see it. */
  sent(m: EntityManager, message: MessageView): Promise<void>;
}
