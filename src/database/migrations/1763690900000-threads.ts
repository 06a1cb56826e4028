import { MigrationInterface, QueryRunner } from 'typeorm';
import { OrderedMessageIds1763690830000 } from './1763690830000-ordered-message-ids';

/**
 * Threads (CONTRACT §15). A reply carries `thread_id` (its root) and `show_in_channel`; both are null on
 * every other message. A thread-only reply (`show_in_channel` false) is not part of the channel's
 * conversation: it takes no `channel_no`/`sender_no`, advances neither `message_count`, `sent_count` nor
 * `last_message_at`, and is left out of `messages_channel_time` (now partial), so history, unread counts
 * and `last_message` skip it with no extra work. `messages_thread` serves GET /v1/messages/:id/replies.
 *
 * A root's counters live in `message_threads` (one small row per root that has had a reply), kept by the
 * same statement that inserts the reply, under the channel's order lock: `reply_count` (live replies),
 * `last_reply_at`, `participants` (reply authors, earliest first, at most 10). An unsend of a reply
 * updates them in its write session. Keeping them off `messages` leaves that wide row out of the churn.
 *
 * chat_send_message gains `p_thread` and `p_show_in_channel`. Under the lock it checks the root (a
 * message of the channel that is not itself a reply: 'no_root' otherwise), and it fills the counters into
 * the reply's `thread.updated` event, the root's realtime `message.updated`.
 */
export const SEND_MESSAGE_WITH_THREADS = `
      CREATE FUNCTION chat_send_message(
        p_channel uuid, p_workspace uuid, p_user uuid, p_sender_key text, p_type text,
        p_content text, p_attachment_url text, p_attachment jsonb, p_parent uuid, p_idempotency_key text,
        p_mentions uuid[], p_thread uuid, p_show_in_channel boolean,
        p_event_ids uuid[], p_event_types text[], p_payloads jsonb[])
      RETURNS TABLE (outcome text, message_id uuid, created_at text, first_seq bigint)
      LANGUAGE plpgsql
      AS $fn$
      DECLARE
        v_id uuid;
        v_created timestamptz;
        v_iso text;
        v_seq bigint;
        v_n integer := coalesce(cardinality(p_event_ids), 0);
        v_in_channel boolean := p_thread IS NULL OR coalesce(p_show_in_channel, false);
        v_channel_no bigint;
        v_sender_no bigint;
        v_us bigint;
        v_thread jsonb;
        v_reply_count integer;
        v_participants uuid[];
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
        IF p_thread IS NOT NULL THEN
          PERFORM 1 FROM messages r WHERE r.id = p_thread AND r.channel_id = p_channel AND r.thread_id IS NULL;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'no_root'::text, NULL::uuid, NULL::text, NULL::bigint;
            RETURN;
          END IF;
        END IF;
        IF NOT v_in_channel THEN
          v_channel_no := NULL;
          v_sender_no := NULL;
        END IF;

        -- the id is a UUIDv7 of the stored instant with its microseconds in the sub-millisecond bits, made
        -- under the lock: within a channel, id order is created_at order, so (created_at, id) never disagree
        v_created := clock_timestamp();
        v_us := (extract(epoch FROM v_created) * 1000000)::bigint;
        v_id := encode(int8send(((v_us / 1000) << 16) | 28672 | (v_us % 1000))
                       || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8), 'hex')::uuid;
        INSERT INTO messages AS msg (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no,
                                     thread_id, show_in_channel)
        VALUES (v_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, v_created, v_channel_no, v_sender_no,
                p_thread, CASE WHEN p_thread IS NOT NULL THEN v_in_channel END)
        ON CONFLICT ON CONSTRAINT messages_idempotency DO NOTHING
        RETURNING msg.id INTO v_id;
        IF v_id IS NULL THEN
          RETURN QUERY SELECT 'replay'::text, x.id, NULL::text, NULL::bigint FROM messages x
            WHERE x.workspace_id = p_workspace AND x.sender_key = p_sender_key AND x.idempotency_key = p_idempotency_key;
          RETURN;
        END IF;

        IF v_in_channel THEN
          UPDATE channels c SET last_seq = c.last_seq + v_n, message_count = v_channel_no,
                                last_message_at = GREATEST(c.last_message_at, v_created)
           WHERE c.id = p_channel
          RETURNING c.last_seq INTO v_seq;
          IF p_user IS NOT NULL THEN
            UPDATE channel_members cm SET sent_count = v_sender_no WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
          END IF;
        ELSE
          UPDATE channels c SET last_seq = c.last_seq + v_n WHERE c.id = p_channel RETURNING c.last_seq INTO v_seq;
        END IF;

        v_iso := to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
        IF p_thread IS NOT NULL THEN
          INSERT INTO message_threads AS t (root_id, channel_id, reply_count, last_reply_at, participants)
          VALUES (p_thread, p_channel, 1, v_created, CASE WHEN p_user IS NULL THEN '{}'::uuid[] ELSE ARRAY[p_user] END)
          ON CONFLICT (root_id) DO UPDATE
            SET reply_count = t.reply_count + 1, last_reply_at = v_created,
                participants = CASE WHEN p_user IS NULL OR p_user = ANY(t.participants) OR cardinality(t.participants) >= 10
                                    THEN t.participants ELSE t.participants || p_user END
          RETURNING t.reply_count, t.participants INTO v_reply_count, v_participants;
          v_thread := jsonb_build_object(
            'reply_count', v_reply_count,
            'last_reply_at', v_iso,
            'thread_participants', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', u.id, 'external_id', u.external_id, 'name', u.name) ORDER BY x.ord), '[]'::jsonb)
                                      FROM unnest(v_participants) WITH ORDINALITY AS x(id, ord) JOIN users u ON u.id = x.id));
        END IF;

        IF cardinality(p_mentions) > 0 THEN
          INSERT INTO message_mentions (message_id, user_id, channel_id, position, created_at)
          SELECT v_id, x.user_id, p_channel, x.ord::smallint, v_created
            FROM unnest(p_mentions) WITH ORDINALITY AS x(user_id, ord)
          ON CONFLICT DO NOTHING;
        END IF;

        IF v_n > 0 THEN
          INSERT INTO events (id, workspace_id, channel_id, seq, type, payload)
          SELECT e.id, p_workspace, p_channel, v_seq - v_n + e.ord, e.type,
                 CASE WHEN e.type = 'thread.updated'
                      THEN jsonb_set(e.payload, '{message}', (e.payload->'message') || coalesce(v_thread, '{}'::jsonb))
                      WHEN e.payload ? 'message'
                      THEN jsonb_set(jsonb_set(e.payload, '{message,id}', to_jsonb(v_id)), '{message,created_at}', to_jsonb(v_iso))
                      WHEN e.payload ? 'message_id' THEN jsonb_set(e.payload, '{message_id}', to_jsonb(v_id))
                      ELSE e.payload END
            FROM unnest(p_event_ids, p_event_types, p_payloads) WITH ORDINALITY AS e(id, type, payload, ord);
        END IF;

        RETURN QUERY SELECT 'sent'::text, v_id, v_iso, v_seq - v_n + 1;
      END
      $fn$`;

const OLD_SIGNATURE =
  'chat_send_message(uuid, uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text, uuid[], uuid[], text[], jsonb[])';
const NEW_SIGNATURE =
  'chat_send_message(uuid, uuid, uuid, text, text, text, text, jsonb, uuid, text, uuid[], uuid, boolean, uuid[], text[], jsonb[])';

export class Threads1763690900000 implements MigrationInterface {
  name = 'Threads1763690900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN thread_id uuid, ADD COLUMN show_in_channel boolean`);
    await q.query(`
      CREATE TABLE message_threads (
        root_id uuid PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        reply_count integer NOT NULL DEFAULT 0 CHECK (reply_count >= 0),
        last_reply_at timestamptz,
        participants uuid[] NOT NULL DEFAULT '{}'
      )`);
    await q.query(
      `CREATE INDEX messages_thread ON messages (thread_id, created_at, id) INCLUDE (user_id) WHERE thread_id IS NOT NULL`,
    );
    // the channel's conversation: everything but thread-only replies
    await q.query(`DROP INDEX messages_channel_time`);
    await q.query(
      `CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at, channel_no)
        WHERE show_in_channel IS NOT FALSE`,
    );
    await q.query(`DROP INDEX messages_channel_unsent`);
    await q.query(
      `CREATE INDEX messages_channel_unsent ON messages (channel_id, created_at) WHERE deleted_at IS NOT NULL AND show_in_channel IS NOT FALSE`,
    );
    await q.query(`DROP FUNCTION ${OLD_SIGNATURE}`);
    await q.query(SEND_MESSAGE_WITH_THREADS);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION ${NEW_SIGNATURE}`);
    await new OrderedMessageIds1763690830000().up(q);
    await q.query(`DROP INDEX messages_channel_unsent`);
    await q.query(
      `CREATE INDEX messages_channel_unsent ON messages (channel_id, created_at) WHERE deleted_at IS NOT NULL`,
    );
    await q.query(`DROP INDEX messages_channel_time`);
    await q.query(
      `CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at, channel_no)`,
    );
    await q.query(`DROP INDEX messages_thread`);
    await q.query(`DROP TABLE message_threads`);
    await q.query(`ALTER TABLE messages DROP COLUMN thread_id, DROP COLUMN show_in_channel`);
  }
}
