/**
 * Who may see a message, the one rule every read path applies (history, replies, pins, search, unread
 * counts, `last_message`, sync, realtime and push):
 * - a viewer never sees the messages of a user they block (CONTRACT §5);
 * - a shadowed message (its author was shadow-banned when sending, CONTRACT §19) is seen only by its
 *   author and by the backend.
 *
 * Both take SQL: `msg` a `messages` row alias, `viewer` an expression of the viewing user's id (a
 * parameter such as `$2::uuid`; NULL stands for a backend key, which sees everything).
 */

/** The message is shadowed and the viewer is another user. */
export function shadowedFrom(msg: string, viewer: string): string {
  return `(${msg}.shadowed AND ${viewer} IS NOT NULL AND ${msg}.user_id IS DISTINCT FROM ${viewer})`;
}

/** The viewer may not see the message: blocked author or shadowed. */
export function hiddenFrom(msg: string, viewer: string): string {
  return `(${shadowedFrom(msg, viewer)}
    OR EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ${viewer} AND b.blocked_id = ${msg}.user_id))`;
}
