-- Several sends of one instance in one statement and one commit (group commit, src/channels/writes/
-- send-batcher.ts): each message as chat_send_message sends it alone, in the batch's order, with its
-- own outcome and its place in the batch (ord, from 1). First the order lock of every channel of the
-- batch is tried, before the first write, so the transaction's id is assigned after all of them and
-- each channel's log order stays its seq order. The batch never waits for a channel's lock: the
-- messages of a channel whose lock another transaction holds are answered 'busy' without being sent,
-- and the caller sends them on their own (a slow write to one channel does not hold up the others).
CREATE OR REPLACE FUNCTION chat_send_messages(p_channels text[], p_batch jsonb)
 RETURNS TABLE(ord integer, outcome text, message_id uuid, created_at text, first_seq bigint, retry_after_ms bigint)
 LANGUAGE plpgsql
AS $function$
      DECLARE
        c text;
        v_locked text[] := '{}';
        x jsonb;
        n integer;
      BEGIN
        FOREACH c IN ARRAY p_channels LOOP
          IF pg_try_advisory_xact_lock(hashtextextended(c, 7243)) THEN
            v_locked := v_locked || c;
          END IF;
        END LOOP;
        FOR x, n IN SELECT e.v, e.n FROM jsonb_array_elements(p_batch) WITH ORDINALITY AS e(v, n) ORDER BY e.n LOOP
          IF NOT (x->>'channel' = ANY (v_locked)) THEN
            RETURN QUERY SELECT n, 'busy'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
            CONTINUE;
          END IF;
          RETURN QUERY SELECT n, s.* FROM chat_send_message(
            (x->>'channel')::uuid, (x->>'workspace')::uuid, (x->>'user')::uuid, x->>'sender_key', x->>'type',
            x->>'content', x->>'attachment_url', nullif(x->'attachment', 'null'::jsonb), (x->>'parent')::uuid,
            x->>'idempotency_key',
            ARRAY(SELECT a.v::uuid FROM jsonb_array_elements_text(x->'mentions') WITH ORDINALITY AS a(v, i) ORDER BY a.i),
            (x->>'thread')::uuid, (x->>'show_in_channel')::boolean, nullif(x->'metadata', 'null'::jsonb),
            (x->>'by_user')::boolean, (x->>'shadowed')::boolean,
            ARRAY(SELECT a.v::uuid FROM jsonb_array_elements_text(x->'event_ids') WITH ORDINALITY AS a(v, i) ORDER BY a.i),
            ARRAY(SELECT a.v FROM jsonb_array_elements_text(x->'event_types') WITH ORDINALITY AS a(v, i) ORDER BY a.i),
            ARRAY(SELECT a.v FROM jsonb_array_elements(x->'payloads') WITH ORDINALITY AS a(v, i) ORDER BY a.i)) AS s;
        END LOOP;
      END
      $function$;
