import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tracing (docs/OBSERVABILITY.md): an event keeps the W3C traceparent of the span that wrote it while
 * tracing is on (null otherwise), so the log's followers and the webhook deliveries link to the request.
 * Only added: a build before this one runs against it unchanged. chat_send_message takes it as a 22nd
 * parameter; its file keeps the 21-parameter overload, now calling the new one, for that build's sends
 * during a rolling upgrade (a default on the new parameter would make those calls ambiguous).
 */
export class EventTraceparent1763691250000 implements MigrationInterface {
  name = 'EventTraceparent1763691250000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP COLUMN traceparent`);
  }
}
