/**
 * CONTRACT §23's thread read state in SQL, the one definition every view of it uses (history and every
 * rendered message, /v1/me/threads, the inbox's `unread_threads`, thread read and unread).
 *
 * A cursor (`thread_reads` row) is a position: replies before (read_at, read_id) are read; `read_id`
 * AFTER_EVERY_ID reads every reply of that instant (the cursor "at" a reply, or at now), a message id
 * puts it just before that message.
 */
export const AFTER_EVERY_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff'; // the inbox's read position uses it too

/** The cursor `tr` as the API shows it: a position just before a message is that instant less 1 ms. */
export function threadReadAt(tr: string): string {
  return `CASE WHEN ${tr}.read_id = '${AFTER_EVERY_ID}' THEN ${tr}.read_at ELSE ${tr}.read_at - interval '1 millisecond' END`;
}

/**
 * A participant's unread replies in thread `t` (a message_threads row) from cursor `tr`, for the user
 * `viewer` (an SQL expression), without scanning the thread: the ordinals given after the one at the
 * cursor (`reply_no` less one index probe), less the ordinals of replies removed outright, of unsent
 * replies, of the viewer's own and of users the viewer blocks after the cursor (ranges of indexes that
 * hold only those rows: empty but for a thread marked unread before the viewer's replies, or a blocked
 * user's replies; the two sets do not overlap: unsent replies are counted without the viewer's own and
 * blocked users', those are counted whether unsent or not). Shadowed replies have no ordinal and count
 * nowhere. A cursor at or past the latest reply (`caughtUp`: a thread read, the user's own last reply)
 * is 0 without probing anything.
 */
export function unreadRepliesSql(t: string, tr: string, viewer: string): string {
  return `(CASE WHEN ${caughtUp(t, tr)} THEN 0 ELSE ${countUnread(t, tr, viewer)} END)`;
}

function countUnread(t: string, tr: string, viewer: string): string {
  const after = `r.created_at >= ${tr}.read_at AND r.thread_no > b.no`;
  const skipped = notCounted(viewer);
  return `(SELECT (${t}.reply_no - b.no
       - (SELECT count(*) FROM message_thread_gaps g WHERE g.root_id = ${t}.root_id AND g.thread_no > b.no)
       - (SELECT count(*) FROM messages r
           WHERE r.thread_id = ${t}.root_id AND r.deleted_at IS NOT NULL AND ${after}
             AND NOT COALESCE(r.user_id = ANY (${skipped}), false))
       - (SELECT count(*) FROM messages r
           WHERE r.thread_id = ${t}.root_id AND ${after} AND r.user_id = ANY (${skipped})))::int
       FROM (SELECT COALESCE((SELECT r.thread_no FROM messages r
                               WHERE r.thread_id = ${t}.root_id AND r.thread_no IS NOT NULL
                                 AND r.created_at <= ${tr}.read_at AND (r.created_at, r.id) < (${tr}.read_at, ${tr}.read_id)
                               ORDER BY r.created_at DESC, r.id DESC LIMIT 1), 0) AS no) b)`;
}

/**
 * The users whose replies never count for `viewer`: themselves and the users they block. With `viewer`
 * a statement's parameter this is computed once per statement (an InitPlan), not once per thread.
 */
function notCounted(viewer: string): string {
  return `(ARRAY[${viewer}] || ARRAY(SELECT bl.blocked_id FROM blocks bl WHERE bl.blocker_id = ${viewer}))`;
}

/**
 * Cursor `tr` is at or past thread `t`'s latest live reply (`last_reply_at`): nothing can be unread,
 * and no index is probed. A thread read, or the user's own reply, leaves the cursor there.
 */
function caughtUp(t: string, tr: string): string {
  return `(${t}.last_reply_at IS NULL OR ${t}.last_reply_at < ${tr}.read_at
           OR (${t}.last_reply_at = ${tr}.read_at AND ${tr}.read_id = '${AFTER_EVERY_ID}'))`;
}

/**
 * Whether participant cursor `tr` has any unread reply in thread `t` (the inbox's `unread_threads`):
 * the first countable reply after the cursor, found walking `messages_thread` from it, instead of the
 * count; nothing probed for a thread the user caught up with.
 */
export function hasUnreadRepliesSql(t: string, tr: string, viewer: string): string {
  return `(NOT ${caughtUp(t, tr)} AND EXISTS (
    SELECT 1 FROM messages r
     WHERE r.thread_id = ${t}.root_id AND r.created_at >= ${tr}.read_at AND (r.created_at, r.id) >= (${tr}.read_at, ${tr}.read_id)
       AND r.deleted_at IS NULL AND r.thread_no IS NOT NULL AND NOT COALESCE(r.user_id = ANY (${notCounted(viewer)}), false)))`;
}

/** `participant` and `unread_replies` of cursor `tr` in thread `t` (a non-participant never has unread replies). */
export function threadStateColumns(t: string, tr: string, viewer: string): string {
  return `${tr}.participant,
    CASE WHEN ${tr}.participant THEN ${unreadRepliesSql(t, tr, viewer)} ELSE 0 END AS unread_replies`;
}
