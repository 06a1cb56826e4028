/**
 * SQL for a member's own channel state (CONTRACT §18), over `channel_members cm` joined to `channels c`
 * (migration 1763690920000). The inbox, the state route and its event all read it through these, so the
 * three always agree.
 */

/** "forever" is stored as PostgreSQL's `infinity`. */
export const FOREVER = 'forever';

/**
 * `muted_until` as the API shows it: "forever", a time in UTC with milliseconds while it is in the future,
 * else null (a mute that has run out is no mute).
 */
export const MUTED_UNTIL_SHOWN = `CASE WHEN cm.muted_until = 'infinity' THEN '${FOREVER}'
  WHEN cm.muted_until > now() THEN to_char(cm.muted_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END`;

/** The member gets no push for the channel now (a mention of them still pushes). */
export const MUTED_NOW = `(cm.muted_until > now())`;

/**
 * Hidden until someone else sends: `message_count - sent_count` counts the channel's messages from others
 * (the send path advances both under the channel's lock; thread-only replies take no part in them, so
 * they do not unhide a channel), `hidden_others` is that count when the member hid it. Messages of users the member blocks do not unhide it: when others have sent, those users'
 * messages since `hidden_at` are counted like the inbox counts them (two index probes per blocked user),
 * and only for a hidden channel of a member who blocks someone. The branches run in order, so a channel
 * that is not hidden costs nothing.
 */
export const HIDDEN_NOW = `(CASE
  WHEN cm.hidden_others IS NULL THEN false
  WHEN c.message_count - cm.sent_count <= cm.hidden_others THEN true
  WHEN NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = cm.user_id) THEN false
  ELSE c.message_count - cm.sent_count - cm.hidden_others <= (
    SELECT COALESCE(sum(
        COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = b.blocked_id AND msg.channel_id = c.id
                   AND msg.sender_no IS NOT NULL ORDER BY msg.created_at DESC LIMIT 1), 0)
      - COALESCE((SELECT msg.sender_no FROM messages msg WHERE msg.user_id = b.blocked_id AND msg.channel_id = c.id
                   AND msg.sender_no IS NOT NULL AND msg.created_at <= cm.hidden_at ORDER BY msg.created_at DESC LIMIT 1), 0)), 0)
      FROM blocks b WHERE b.blocker_id = cm.user_id)
END)`;
