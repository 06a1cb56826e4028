-- Keeps channels.member_count (CONTRACT §29: a channel is large while it is above its workspace's
-- large_channel_threshold) equal to the channel's rows in channel_members: a statement-level trigger
-- on insert and on delete (also a cascade's), one UPDATE per channel the statement touched. It also
-- stamps channels.members_changed_at: a send soon after a change is published through the log, after
-- the change has moved the members' sockets (src/events/live-publish.ts, ROOM_MOVE_GRACE_MS).
CREATE OR REPLACE FUNCTION chat_count_members()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE channels c SET member_count = c.member_count + d.n, members_changed_at = clock_timestamp()
            FROM (SELECT channel_id, count(*)::integer AS n FROM added GROUP BY channel_id) d
           WHERE c.id = d.channel_id;
        ELSE
          UPDATE channels c SET member_count = c.member_count - d.n, members_changed_at = clock_timestamp()
            FROM (SELECT channel_id, count(*)::integer AS n FROM removed GROUP BY channel_id) d
           WHERE c.id = d.channel_id;
        END IF;
        RETURN NULL;
      END
      $function$;
