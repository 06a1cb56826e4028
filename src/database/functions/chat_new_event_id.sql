-- A new event id made in SQL, as the application's newId() makes them (a UUIDv7 of now): for events a
-- statement writes itself (a send's draft.deleted, src/database/functions/chat_send_message.sql).
CREATE OR REPLACE FUNCTION chat_new_event_id()
 RETURNS uuid
 LANGUAGE sql
AS $function$
  SELECT encode(int8send(((extract(epoch FROM clock_timestamp()) * 1000)::bigint << 16) | 28672)
                || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8), 'hex')::uuid
$function$;
