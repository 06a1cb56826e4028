import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * chat_send_message takes `p_id`, the id a pre-send hook was told (CONTRACT §27), and `p_keep_draft`
 * (a scheduled message's send leaves the sender's draft, CONTRACT §24) as its 20th and 21st parameters
 * (src/database/functions/chat_send_message.sql makes the new one after the migrations): the old
 * overload goes, so no call is ambiguous.
 */
export class SendWithGivenId1763691200000 implements MigrationInterface {
  name = 'SendWithGivenId1763691200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS chat_send_message(uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text,
      uuid[], uuid, boolean, jsonb, boolean, boolean, uuid[], text[], jsonb[])`);
  }

  async down(): Promise<void> {
    // the function files make the current text; an older one is not brought back
  }
}
