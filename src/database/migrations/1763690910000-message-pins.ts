import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CONTRACT §16, pinned messages: a table of its own rather than columns on `messages`.
 * - The message INSERT path (chat_send_message, the hot path) is untouched: no column, index or
 *   foreign key of pins is paid by a send.
 * - A pin or unpin writes a row here instead of rewriting the message row (with its search_doc GIN
 *   entries) through a non-HOT update.
 * - At most a few dozen rows per channel: `message_pins_channel` serves both the pins list (keyset on
 *   pinned_at, message_id, newest first) and the 50-pin limit's count, which runs under the channel's
 *   order lock (every pin of a channel holds it), so the count and the insert after it are race-free.
 * - Unsending a pinned message deletes its row in the unsend transaction; deleting the message or the
 *   channel cascades; deleting the user who pinned keeps the pin with `pinned_by` null (the partial
 *   index serves that ON DELETE SET NULL without indexing the backend key's pins).
 */
export class MessagePins1763690910000 implements MigrationInterface {
  name = 'MessagePins1763690910000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE message_pins (
        message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        pinned_by uuid REFERENCES users(id) ON DELETE SET NULL,
        pinned_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX message_pins_channel ON message_pins (channel_id, pinned_at DESC, message_id DESC)`,
    );
    await q.query(
      `CREATE INDEX message_pins_pinned_by ON message_pins (pinned_by) WHERE pinned_by IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE message_pins`);
  }
}
