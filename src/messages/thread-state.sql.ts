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
 * nowhere.
 */
export function unreadRepliesSql(t: string, tr: string, viewer: string): string {
  const after = `r.created_at >= ${tr}.read_at AND r.thread_no > b.no`;
  return `(SELECT (${t}.reply_no - b.no
       - (SELECT count(*) FROM message_thread_gaps g WHERE g.root_id = ${t}.root_id AND g.thread_no > b.no)
       - (SELECT count(*) FROM messages r
           WHERE r.thread_id = ${t}.root_id AND r.deleted_at IS NOT NULL AND ${after}
             AND r.user_id IS DISTINCT FROM ${viewer}
             AND NOT EXISTS (SELECT 1 FROM blocks bl WHERE bl.blocker_id = ${viewer} AND bl.blocked_id = r.user_id))
       - (SELECT count(*) FROM messages r
           WHERE r.thread_id = ${t}.root_id AND ${after}
             AND r.user_id = ANY (ARRAY(SELECT ${viewer} UNION ALL SELECT bl.blocked_id FROM blocks bl WHERE bl.blocker_id = ${viewer}))))::int
       FROM (SELECT COALESCE((SELECT r.thread_no FROM messages r
                               WHERE r.thread_id = ${t}.root_id AND r.thread_no IS NOT NULL
                                 AND r.created_at <= ${tr}.read_at AND (r.created_at, r.id) < (${tr}.read_at, ${tr}.read_id)
                               ORDER BY r.created_at DESC, r.id DESC LIMIT 1), 0) AS no) b)`;
}

/** `participant` and `unread_replies` of cursor `tr` in thread `t` (a non-participant never has unread replies). */
export function threadStateColumns(t: string, tr: string, viewer: string): string {
  return `${tr}.participant, CASE WHEN ${tr}.participant THEN ${unreadRepliesSql(t, tr, viewer)} ELSE 0 END AS unread_replies`;
}
