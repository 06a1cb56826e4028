import { MigrationInterface, QueryRunner } from 'typeorm';
import { ChannelWriteSession1763690800000 } from './1763690800000-channel-write-session';

/**
 * Counters for the inbox's unread counts (constant work per channel, not a scan of what is unread):
 * each message carries its ordinal in the channel (`channel_no`) and among its sender's messages in
 * the channel (`sender_no`); the channel keeps `message_count` and each member `sent_count`, all
 * advanced under the channel's lock. The messages after a read cursor are then `message_count` minus
 * the `channel_no` of the last message at or before it (one index probe), and the reader's own among
 * them likewise from `sender_no`. The `messages_user` index becomes (user_id, channel_id, created_at)
 * with `sender_no`, which serves both the probe and user deletion.
 *
 * chat_send_message is replaced by the same function advancing the counters (it still writes nothing
 * before the message insert succeeds, so a replay or a refusal changes no counter).
 */
/**
 * Sets the counters from the messages as they are (the migration's backfill; benchmarks that seed
 * messages with plain INSERTs run it too).
 */
export const INBOX_COUNTER_BACKFILL = [
  `      UPDATE messages m SET channel_no = x.channel_no, sender_no = CASE WHEN m.user_id IS NULL THEN NULL ELSE x.sender_no END
        FROM (SELECT id,
                     row_number() OVER (PARTITION BY channel_id ORDER BY created_at, id) AS channel_no,
                     row_number() OVER (PARTITION BY channel_id, user_id ORDER BY created_at, id) AS sender_no
                FROM messages) x
       WHERE x.id = m.id`,
  `      UPDATE channels c SET message_count = x.n
        FROM (SELECT channel_id, count(*) AS n FROM messages GROUP BY channel_id) x WHERE x.channel_id = c.id`,
  `      UPDATE channel_members cm SET sent_count = x.n
        FROM (SELECT channel_id, user_id, max(sender_no) AS n FROM messages WHERE user_id IS NOT NULL GROUP BY channel_id, user_id) x
       WHERE x.channel_id = cm.channel_id AND x.user_id = cm.user_id`,
];

/** chat_send_message advancing the counters (replaced by 1763690830000, whose `down` restores it). */
export const SEND_MESSAGE_WITH_COUNTERS = `
      CREATE OR REPLACE FUNCTION chat_send_message(
        p_channel uuid, p_workspace uuid, p_id uuid, p_user uuid, p_sender_key text, p_type text,
        p_content text, p_attachment_url text, p_attachment jsonb, p_parent uuid, p_idempotency_key text,
        p_mentions uuid[], p_event_ids uuid[], p_event_types text[], p_payloads jsonb[])
      RETURNS TABLE (outcome text, message_id uuid, created_at text, first_seq bigint)
      LANGUAGE plpgsql
      AS $fn$
      DECLARE
        v_id uuid;
        v_created timestamptz;
        v_iso text;
        v_seq bigint;
        v_n integer := coalesce(cardinality(p_event_ids), 0);
        v_channel_no bigint;
        v_sender_no bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_channel::text, 7243));
        -- reads only until the insert succeeds: a replay or a refusal writes nothing
        SELECT c.message_count + 1 INTO v_channel_no FROM channels c WHERE c.id = p_channel AND c.workspace_id = p_workspace;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'gone'::text, NULL::uuid, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        IF p_user IS NOT NULL THEN
          SELECT cm.sent_count + 1 INTO v_sender_no FROM channel_members cm WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_member'::text, NULL::uuid, NULL::text, NULL::bigint;
            RETURN;
          END IF;
        END IF;

        INSERT INTO messages AS msg (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no)
        VALUES (p_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, clock_timestamp(), v_channel_no, v_sender_no)
        ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
        RETURNING msg.id, msg.created_at INTO v_id, v_created;
        IF v_id IS NULL THEN
          RETURN QUERY SELECT 'replay'::text, x.id, NULL::text, NULL::bigint FROM messages x
            WHERE x.workspace_id = p_workspace AND x.sender_key = p_sender_key AND x.idempotency_key = p_idempotency_key;
          RETURN;
        END IF;

        UPDATE channels c SET last_seq = c.last_seq + v_n, message_count = v_channel_no,
                              last_message_at = GREATEST(c.last_message_at, v_created)
         WHERE c.id = p_channel
        RETURNING c.last_seq INTO v_seq;
        IF p_user IS NOT NULL THEN
          UPDATE channel_members cm SET sent_count = v_sender_no WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
        END IF;

        IF cardinality(p_mentions) > 0 THEN
          INSERT INTO message_mentions (message_id, user_id, channel_id, position, created_at)
          SELECT p_id, x.user_id, p_channel, x.ord::smallint, v_created
            FROM unnest(p_mentions) WITH ORDINALITY AS x(user_id, ord)
          ON CONFLICT DO NOTHING;
        END IF;

        v_iso := to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
        IF v_n > 0 THEN
          INSERT INTO events (id, workspace_id, channel_id, seq, type, payload)
          SELECT e.id, p_workspace, p_channel, v_seq - v_n + e.ord, e.type,
                 CASE WHEN (e.payload -> 'message') ? 'created_at'
                      THEN jsonb_set(e.payload, '{message,created_at}', to_jsonb(v_iso))
                      ELSE e.payload END
            FROM unnest(p_event_ids, p_event_types, p_payloads) WITH ORDINALITY AS e(id, type, payload, ord);
        END IF;

        RETURN QUERY SELECT 'sent'::text, v_id, v_iso, v_seq - v_n + 1;
      END
      $fn$`;

export class InboxCounters1763690820000 implements MigrationInterface {
  name = 'InboxCounters1763690820000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE channels ADD COLUMN message_count bigint NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE channel_members ADD COLUMN sent_count bigint NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE messages ADD COLUMN channel_no bigint, ADD COLUMN sender_no bigint`);
    for (const sql of INBOX_COUNTER_BACKFILL) await q.query(sql);
    await q.query(`DROP INDEX messages_user`);
    await q.query(
      `CREATE INDEX messages_user_channel ON messages (user_id, channel_id, created_at) INCLUDE (sender_no)`,
    );
    await q.query(`DROP INDEX messages_channel_time`);
    await q.query(
      `CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at, channel_no)`,
    );
    await q.query(
      `CREATE INDEX messages_channel_unsent ON messages (channel_id, created_at) WHERE deleted_at IS NOT NULL`,
    );
    await q.query(SEND_MESSAGE_WITH_COUNTERS);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION chat_send_message(uuid, uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text, uuid[], uuid[], text[], jsonb[])`,
    );
    await new ChannelWriteSession1763690800000().up(q);
    await q.query(`DROP INDEX messages_channel_unsent`);
    await q.query(`DROP INDEX messages_channel_time`);
    await q.query(
      `CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at)`,
    );
    await q.query(`DROP INDEX messages_user_channel`);
    await q.query(`CREATE INDEX messages_user ON messages (user_id)`);
    await q.query(`ALTER TABLE messages DROP COLUMN channel_no, DROP COLUMN sender_no`);
    await q.query(`ALTER TABLE channel_members DROP COLUMN sent_count`);
    await q.query(`ALTER TABLE channels DROP COLUMN message_count`);
  }
}
