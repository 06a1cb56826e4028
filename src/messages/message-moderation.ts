import { EntityManager } from 'typeorm';

export interface ModerationInput {
  workspaceId: string;
  channelId: string;
  channelExternalId: string;
  /** The author; moderation never sees system messages. */
  userId: string;
  content: string;
  /** A new message, or the new content of an existing one. */
  kind: 'send' | 'edit';
  /** The edited message (kind 'edit'). */
  messageId?: string;
}

export interface ModerationVerdict {
  /** The content to store: the input, or a masked version of it. */
  content: string;
  /**
   * Runs inside the transaction that persists the message, with its id: the place to write audit rows
   * and `message.moderated` events so they commit with the message.
   */
  record?: (m: EntityManager, messageId: string) => Promise<void>;
}

/**
 * The moderation step of CONTRACT §7's send order (after validation, before persisting), also applied
 * to edits. It runs outside any transaction, so it may call Redis. To reject, throw
 * `new AppError('MESSAGE_REJECTED')` after recording what it must.
 */
export abstract class MessageModeration {
  abstract evaluate(input: ModerationInput): Promise<ModerationVerdict>;
}
