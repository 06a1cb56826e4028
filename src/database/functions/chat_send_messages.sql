-- Several sends of one instance in one statement and one commit (group commit, src/channels/writes/
-- send-batcher.ts): each message as chat_send_message sends it alone, in the batch's order, with its
-- own outcome. First the order lock of every channel of the batch is tried, before the first write, so
-- the transaction's id is assigned after all of them and each channel's log order stays its seq order.
-- The batch never waits for a lock: the messages of a channel whose lock another transaction holds are
-- answered 'busy' without being sent, and the caller sends them on their own (a slow write to one
-- channel does not hold up the sends to the others).
CREATE OR REPLACE FUNCTION chat_send_messages(p_channels text[], p_batch jsonb)
 RETURNS TABLE(outcome text, message_id uuid, created_at text, first_seq bigint, retry_after_ms bigint)
 LANGUAGE plpgsql
AS $function$
      DECLARE
        c text;
        v_locked text[] := '{}';
        x jsonb;
      BEGIN
        FOREACH c IN ARRAY p_channels LOOP
          IF pg_try_advisory_xact_lock(hashtextextended(c, 7243)) THEN
            v_locked := v_locked || c;
          END IF;
        END LOOP;
        FOR x IN SELECT e FROM jsonb_array_elements(p_batch) AS e LOOP
          IF NOT (x->>'channel' = ANY (v_locked)) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::uuid, NULL::text, NULL::bigint, NULL::bigint;
            CONTINUE;
          END IF;
          RETURN QUERY SELECT * FROM chat_send_message(
            (x->>'channel')::uuid, (x->>'workspace')::uuid, (x->>'user')::uuid, x->>'sender_key', x->>'type',
            x->>'content', x->>'attachment_url', nullif(x->'attachment', 'null'::jsonb), (x->>'parent')::uuid,
            x->>'idempotency_key', ARRAY(SELECT jsonb_array_elements_text(x->'mentions'))::uuid[],
            (x->>'thread')::uuid, (x->>'show_in_channel')::boolean, nullif(x->'metadata', 'null'::jsonb),
            (x->>'by_user')::boolean, (x->>'shadowed')::boolean,
            ARRAY(SELECT jsonb_array_elements_text(x->'event_ids'))::uuid[],
            ARRAY(SELECT jsonb_array_elements_text(x->'event_types')),
            ARRAY(SELECT jsonb_array_elements(x->'payloads')));
        END LOOP;
      END
      $function$;
