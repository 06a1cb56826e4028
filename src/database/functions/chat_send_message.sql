-- Sends one message under its channel's lock: checks, seq, counters, thread, mentions, the sender's draft
-- and events in one
-- call (src/channels/channel-writes.ts). Its lock key is the one src/events/channel-order.ts takes.
-- p_traceparent: the W3C traceparent of the span that sends (tracing on), kept with the events it writes.
CREATE OR REPLACE FUNCTION chat_send_message(p_channel uuid, p_workspace uuid, p_user uuid, p_sender_key text, p_type text, p_content text, p_attachment_url text, p_attachment jsonb, p_parent uuid, p_idempotency_key text, p_mentions uuid[], p_thread uuid, p_show_in_channel boolean, p_metadata jsonb, p_by_user boolean, p_shadowed boolean, p_event_ids uuid[], p_event_types text[], p_payloads jsonb[], p_id uuid, p_keep_draft boolean, p_traceparent text)
 RETURNS TABLE(outcome text, message_id uuid, created_at text, first_seq bigint, retry_after_ms bigint)
 LANGUAGE plpgsql
AS $function$
      DECLARE
        v_id uuid;
        v_created timestamptz;
        v_iso text;
        v_seq bigint;
        v_n integer := coalesce(cardinality(p_event_ids), 0);
        v_in_channel boolean := p_thread IS NULL OR coalesce(p_show_in_channel, false);
        -- a shadowed message is shown (to its author and the backend) but counted nowhere
        v_shadowed boolean := coalesce(p_shadowed, false);
        v_counted boolean := v_in_channel AND NOT v_shadowed;
        v_channel_no bigint;
        v_sender_no bigint;
        v_us bigint;
        v_thread jsonb;
        v_reply_count integer;
        v_participants uuid[];
        v_frozen boolean;
        v_slow integer;
        v_role text;
        v_last_sent timestamptz;
        v_thread_no bigint;
        v_root_user uuid;
        v_root_at timestamptz;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_channel::text, 7243));
        -- reads only until the insert succeeds: a replay or a refusal writes nothing
        SELECT c.message_count + 1, c.frozen, c.slow_mode_seconds INTO v_channel_no, v_frozen, v_slow
          FROM channels c WHERE c.id = p_channel AND c.workspace_id = p_workspace;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'gone'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        IF p_user IS NOT NULL THEN
          SELECT cm.sent_count + 1, cm.role, cm.last_sent_at INTO v_sender_no, v_role, v_last_sent
            FROM channel_members cm WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_member'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
            RETURN;
          END IF;
        END IF;
        -- a user's own send (not a backend's, not a system message): the channel controls, under the lock
        IF p_by_user THEN
          IF v_frozen THEN
            RETURN QUERY SELECT 'frozen'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
            RETURN;
          END IF;
          IF v_slow > 0 AND v_role IS DISTINCT FROM 'admin' AND v_last_sent IS NOT NULL
             AND v_last_sent > clock_timestamp() - make_interval(secs => v_slow) THEN
            RETURN QUERY SELECT 'slow_mode'::text, NULL::uuid, NULL::text, NULL::bigint,
              ceil(extract(epoch FROM v_last_sent + make_interval(secs => v_slow) - clock_timestamp()) * 1000)::bigint;
            RETURN;
          END IF;
        END IF;
        IF p_thread IS NOT NULL THEN
          SELECT r.user_id, r.created_at INTO v_root_user, v_root_at
            FROM messages r WHERE r.id = p_thread AND r.channel_id = p_channel AND r.thread_id IS NULL;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'no_root'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
            RETURN;
          END IF;
          -- the reply's ordinal in its thread (CONTRACT §23's unread arithmetic); a shadowed reply has none
          IF NOT v_shadowed THEN
            v_thread_no := COALESCE((SELECT t.reply_no FROM message_threads t WHERE t.root_id = p_thread), 0) + 1;
          END IF;
        END IF;
        IF NOT v_counted THEN
          v_channel_no := NULL;
          v_sender_no := NULL;
        END IF;

        -- the id is a UUIDv7 of the stored instant with its microseconds in the sub-millisecond bits, made
        -- under the lock: within a channel, id order is created_at order, so (created_at, id) never disagree.
        -- p_id: the id a pre-send hook was told (CONTRACT §27), made before the call; every order is by
        -- (created_at, id), so only its place among messages of the same millisecond may differ
        v_created := clock_timestamp();
        v_us := (extract(epoch FROM v_created) * 1000000)::bigint;
        v_id := coalesce(p_id, encode(int8send(((v_us / 1000) << 16) | 28672 | (v_us % 1000))
                       || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8), 'hex')::uuid);
        IF p_idempotency_key IS NULL THEN
          INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no,
                                     thread_id, show_in_channel, metadata, shadowed, thread_no)
          VALUES (v_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, v_created, v_channel_no, v_sender_no,
                p_thread, CASE WHEN p_thread IS NOT NULL THEN v_in_channel END, p_metadata, v_shadowed, v_thread_no);
        ELSE
          INSERT INTO messages AS msg (id, workspace_id, channel_id, user_id, sender_key, type, content, attachment_url,
                                     attachment, parent_id, idempotency_key, created_at, channel_no, sender_no,
                                     thread_id, show_in_channel, metadata, shadowed, thread_no)
          VALUES (v_id, p_workspace, p_channel, p_user, p_sender_key, p_type, p_content, p_attachment_url,
                p_attachment, p_parent, p_idempotency_key, v_created, v_channel_no, v_sender_no,
                p_thread, CASE WHEN p_thread IS NOT NULL THEN v_in_channel END, p_metadata, v_shadowed, v_thread_no)
          ON CONFLICT (workspace_id, sender_key, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING msg.id INTO v_id;
        END IF;
        IF v_id IS NULL THEN
          RETURN QUERY SELECT 'replay'::text, x.id, NULL::text, NULL::bigint, NULL::bigint FROM messages x
            WHERE x.workspace_id = p_workspace AND x.sender_key = p_sender_key AND x.idempotency_key = p_idempotency_key;
          RETURN;
        END IF;

        IF v_counted THEN
          UPDATE channels c SET last_seq = c.last_seq + v_n, message_count = v_channel_no,
                                last_message_at = GREATEST(c.last_message_at, v_created)
           WHERE c.id = p_channel
          RETURNING c.last_seq INTO v_seq;
          IF p_user IS NOT NULL THEN
            UPDATE channel_members cm SET sent_count = v_sender_no,
                   last_sent_at = CASE WHEN p_by_user THEN v_created ELSE cm.last_sent_at END
             WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
          END IF;
        ELSE
          UPDATE channels c SET last_seq = c.last_seq + v_n WHERE c.id = p_channel RETURNING c.last_seq INTO v_seq;
          IF p_by_user THEN
            UPDATE channel_members cm SET last_sent_at = v_created WHERE cm.channel_id = p_channel AND cm.user_id = p_user;
          END IF;
        END IF;

        v_iso := to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
        IF p_thread IS NOT NULL AND NOT v_shadowed THEN
          INSERT INTO message_threads AS t (root_id, channel_id, reply_count, last_reply_at, participants, reply_no)
          VALUES (p_thread, p_channel, 1, v_created, CASE WHEN p_user IS NULL THEN '{}'::uuid[] ELSE ARRAY[p_user] END, v_thread_no)
          ON CONFLICT (root_id) DO UPDATE
            SET reply_count = t.reply_count + 1, last_reply_at = v_created, reply_no = v_thread_no,
                participants = CASE WHEN p_user IS NULL OR p_user = ANY(t.participants) OR cardinality(t.participants) >= 10
                                    THEN t.participants ELSE t.participants || p_user END
          RETURNING t.reply_count, t.participants INTO v_reply_count, v_participants;
          v_thread := jsonb_build_object(
            'reply_count', v_reply_count,
            'last_reply_at', v_iso,
            'thread_participants', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', u.id, 'external_id', u.external_id, 'name', u.name) ORDER BY x.ord), '[]'::jsonb)
                                      FROM unnest(v_participants) WITH ORDINALITY AS x(id, ord) JOIN users u ON u.id = x.id));

          -- CONTRACT §23's participants and cursors: the replier's moves to the reply; the first reply makes
          -- the root's author (cursor at the root) and the users it mentions (just before it) participants;
          -- a mentioned user takes part from just before the mentioning reply. Members only. A cursor made a
          -- participant here kept 0 as a non-participant, so the count below starts it right.
          IF p_user IS NOT NULL THEN
            INSERT INTO thread_reads AS tr (root_id, user_id, channel_id, participant, read_at, read_id)
            VALUES (p_thread, p_user, p_channel, true, v_created, 'ffffffff-ffff-ffff-ffff-ffffffffffff')
            ON CONFLICT (root_id, user_id) DO UPDATE
              SET participant = true, read_at = v_created, read_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff', unread_replies = 0;
          END IF;
          IF v_thread_no = 1 THEN
            INSERT INTO thread_reads AS tr (root_id, user_id, channel_id, participant, read_at, read_id)
            SELECT p_thread, cm.user_id, p_channel, true, v_root_at,
                   CASE WHEN cm.user_id = v_root_user THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid ELSE p_thread END
              FROM (SELECT v_root_user AS user_id UNION SELECT mm.user_id FROM message_mentions mm WHERE mm.message_id = p_thread) x
              JOIN channel_members cm ON cm.channel_id = p_channel AND cm.user_id = x.user_id
             WHERE cm.user_id IS DISTINCT FROM p_user
            ON CONFLICT (root_id, user_id) DO UPDATE SET participant = true WHERE NOT tr.participant;
          END IF;
          IF cardinality(p_mentions) > 0 THEN
            INSERT INTO thread_reads AS tr (root_id, user_id, channel_id, participant, read_at, read_id)
            SELECT p_thread, cm.user_id, p_channel, true, v_created, v_id
              FROM unnest(p_mentions) AS x(user_id)
              JOIN channel_members cm ON cm.channel_id = p_channel AND cm.user_id = x.user_id
             WHERE cm.user_id IS DISTINCT FROM p_user
            ON CONFLICT (root_id, user_id) DO UPDATE
              SET participant = true, read_at = EXCLUDED.read_at, read_id = EXCLUDED.read_id WHERE NOT tr.participant;
          END IF;
          -- every other participant behind the reply has one more unread (a non-participant's count stays 0;
          -- src/messages/thread-state.sql.ts)
          UPDATE thread_reads tr SET unread_replies = tr.unread_replies + 1
           WHERE tr.root_id = p_thread AND tr.participant AND tr.user_id IS DISTINCT FROM p_user
             AND (tr.read_at, tr.read_id) <= (v_created, v_id);
        END IF;

        IF cardinality(p_mentions) > 0 AND NOT v_shadowed THEN
          INSERT INTO message_mentions (message_id, user_id, channel_id, position, created_at)
          SELECT v_id, x.user_id, p_channel, x.ord::smallint, v_created
            FROM unnest(p_mentions) WITH ORDINALITY AS x(user_id, ord)
          ON CONFLICT DO NOTHING;
        END IF;

        -- CONTRACT §24: the sender's draft of this channel or thread goes with the send (draft.deleted to them);
        -- a scheduled message took it when it was scheduled (p_keep_draft: the draft now is a new one)
        IF p_user IS NOT NULL AND NOT coalesce(p_keep_draft, false) THEN
          IF p_thread IS NULL THEN
            DELETE FROM drafts d WHERE d.user_id = p_user AND d.channel_id = p_channel AND d.thread_id IS NULL;
          ELSE
            DELETE FROM drafts d WHERE d.user_id = p_user AND d.channel_id = p_channel AND d.thread_id = p_thread;
          END IF;
          IF FOUND THEN
            INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, audience, traceparent)
            VALUES (chat_new_event_id(),
                    p_workspace, NULL, NULL, 'draft.deleted',
                    jsonb_build_object('channel_id', p_channel, 'thread_id', p_thread), ARRAY[p_user], p_traceparent);
          END IF;
        END IF;

        IF v_n > 0 THEN
          INSERT INTO events (id, workspace_id, channel_id, seq, type, payload, traceparent)
          SELECT e.id, p_workspace, p_channel, v_seq - v_n + e.ord, e.type,
                 CASE WHEN e.type = 'thread.updated'
                      THEN jsonb_set(e.payload, '{message}', (e.payload->'message') || coalesce(v_thread, '{}'::jsonb))
                      WHEN e.payload ? 'message'
                      THEN jsonb_set(jsonb_set(e.payload, '{message,id}', to_jsonb(v_id)), '{message,created_at}', to_jsonb(v_iso))
                      WHEN e.payload ? 'message_id' THEN jsonb_set(e.payload, '{message_id}', to_jsonb(v_id))
                      ELSE e.payload END,
                 p_traceparent
            FROM unnest(p_event_ids, p_event_types, p_payloads) WITH ORDINALITY AS e(id, type, payload, ord);
        END IF;

        RETURN QUERY SELECT 'sent'::text, v_id, v_iso, v_seq - v_n + 1, NULL::bigint;
      END
      $function$;

-- The overload without p_traceparent, for the release before tracing (it calls it during a rolling
-- upgrade, docs/UPGRADES.md): the same send, with no trace. A release after the next one drops it.
CREATE OR REPLACE FUNCTION chat_send_message(p_channel uuid, p_workspace uuid, p_user uuid, p_sender_key text, p_type text, p_content text, p_attachment_url text, p_attachment jsonb, p_parent uuid, p_idempotency_key text, p_mentions uuid[], p_thread uuid, p_show_in_channel boolean, p_metadata jsonb, p_by_user boolean, p_shadowed boolean, p_event_ids uuid[], p_event_types text[], p_payloads jsonb[], p_id uuid, p_keep_draft boolean)
 RETURNS TABLE(outcome text, message_id uuid, created_at text, first_seq bigint, retry_after_ms bigint)
 LANGUAGE sql
AS $function$
  SELECT * FROM chat_send_message(p_channel, p_workspace, p_user, p_sender_key, p_type, p_content, p_attachment_url,
    p_attachment, p_parent, p_idempotency_key, p_mentions, p_thread, p_show_in_channel, p_metadata, p_by_user,
    p_shadowed, p_event_ids, p_event_types, p_payloads, p_id, p_keep_draft, NULL::text)
$function$;
