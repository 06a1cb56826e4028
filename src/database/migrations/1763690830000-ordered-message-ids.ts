import { MigrationInterface, QueryRunner } from 'typeorm';
import { SEND_MESSAGE_WITH_COUNTERS } from './1763690820000-inbox-counters';

/**
 * chat_send_message makes the message's id itself, under the channel's lock: a UUIDv7 of the stored
 * instant whose sub-millisecond bits (RFC 9562's rand_a) hold its microseconds. Within a channel, id
 * order is then created_at order, as it was when the application made the id inside its transaction,
 * so a history page ordered by (created_at, id) never shows two messages of one millisecond out of id
 * order. The events of the message get the id like they get created_at; `p_id` is ignored.
 */
export class OrderedMessageIds1763690830000 implements MigrationInterface {
  name = 'OrderedMessageIds1763690830000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
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
        v_us bigint;
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

        -- the id is a UUIDv7 of the stored instant with its microseconds in the sub-millisecond bits, made
        -- under the lock: within a channel, id order is created_at order, so (created_at, id) never disagree
        v_created := clock_timestamp();
        v_us := (extract(epoch FROM v_created) * 1000000)::bigint;
        v_id := encode(int8send(((v_us / 1000) << 16) | 28672 | (v_us % 1000))
                       || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8), 'hex')::uuid;
        INSERT INTO messages AS msg (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no)
        VALUES (v_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, v_created, v_channel_no, v_sender_no)
        ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
        RETURNING msg.id INTO v_id;
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
          SELECT v_id, x.user_id, p_channel, x.ord::smallint, v_created
            FROM unnest(p_mentions) WITH ORDINALITY AS x(user_id, ord)
          ON CONFLICT DO NOTHING;
        END IF;

        v_iso := to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
        IF v_n > 0 THEN
          INSERT INTO events (id, workspace_id, channel_id, seq, type, payload)
          SELECT e.id, p_workspace, p_channel, v_seq - v_n + e.ord, e.type,
                 CASE WHEN e.payload ? 'message'
                      THEN jsonb_set(jsonb_set(e.payload, '{message,id}', to_jsonb(v_id)), '{message,created_at}', to_jsonb(v_iso))
                      WHEN e.payload ? 'message_id' THEN jsonb_set(e.payload, '{message_id}', to_jsonb(v_id))
                      ELSE e.payload END
            FROM unnest(p_event_ids, p_event_types, p_payloads) WITH ORDINALITY AS e(id, type, payload, ord);
        END IF;

        RETURN QUERY SELECT 'sent'::text, v_id, v_iso, v_seq - v_n + 1;
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(SEND_MESSAGE_WITH_COUNTERS);
  }
}
