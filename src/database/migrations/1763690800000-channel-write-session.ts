import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The critical section of a send as one server-side function (docs/PERFORMANCE.md).
 *
 * `chat_send_message` does, in the statement that calls it, what a send used to do over five client
 * round trips while holding the channel's order lock: take the lock (the advisory lock of
 * orderChannelWrites: it assigns no transaction id, so per channel the log's transaction order is the
 * seq order), re-check the sender's membership, insert the message (idempotently), its mentions,
 * advance the channel's `seq` and `last_message_at`, and write the message's events with their seqs.
 * Called outside an explicit transaction, the lock is held only for PostgreSQL's own execution of
 * these statements, then released by the implicit commit.
 *
 * Outcomes: `sent` (the message, its created_at and the first seq), `replay` (the idempotency key
 * already names a message: nothing written), `not_member` (nothing written), `gone` (the channel was
 * deleted meanwhile: nothing written). Event payloads come from the application; a payload carrying
 * `message.created_at` gets the stored instant, in the same millisecond ISO form the API answers with.
 */
export class ChannelWriteSession1763690800000 implements MigrationInterface {
  name = 'ChannelWriteSession1763690800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION chat_send_message(
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
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_channel::text, 7243));
        PERFORM 1 FROM channels c WHERE c.id = p_channel AND c.workspace_id = p_workspace;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'gone'::text, NULL::uuid, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        IF p_user IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM channel_members cm WHERE cm.channel_id = p_channel AND cm.user_id = p_user) THEN
          RETURN QUERY SELECT 'not_member'::text, NULL::uuid, NULL::text, NULL::bigint;
          RETURN;
        END IF;

        INSERT INTO messages AS msg (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at)
        VALUES (p_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, clock_timestamp())
        ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
        RETURNING msg.id, msg.created_at INTO v_id, v_created;
        IF v_id IS NULL THEN
          RETURN QUERY SELECT 'replay'::text, x.id, NULL::text, NULL::bigint FROM messages x
            WHERE x.workspace_id = p_workspace AND x.sender_key = p_sender_key AND x.idempotency_key = p_idempotency_key;
          RETURN;
        END IF;

        UPDATE channels c SET last_seq = c.last_seq + v_n,
                              last_message_at = GREATEST(c.last_message_at, v_created)
         WHERE c.id = p_channel
        RETURNING c.last_seq INTO v_seq;

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
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION chat_send_message(uuid, uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text, uuid[], uuid[], text[], jsonb[])`,
    );
  }
}
