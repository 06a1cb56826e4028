import { hiddenFrom } from './visibility';

/**
 * CONTRACT §23's thread read state in SQL, the one definition every view of it uses (history and every
 * rendered message, /v1/me/threads, the inbox's `unread_threads`, thread read and unread) and every
 * write that keeps it.
 *
 * A cursor (`thread_reads` row) is a position: replies before (read_at, read_id) are read; `read_id`
 * AFTER_EVERY_ID reads every reply of that instant (the cursor "at" a reply, or at now), a message id
 * puts it just before that message.
 *
 * A participant's cursor keeps its count, `unread_replies`: the live replies after it that are not the
 * user's own (a shadowed reply counts nowhere). Every write that changes it holds the channel's order
 * lock (src/events/channel-order.ts): the send (chat_send_message: 0 for the replier, +1 for the other
 * participants behind the reply), an unsend or an erasure's removal (REPLIES_GONE: −1 behind each reply
 * that stops counting), thread read (0) and thread unread (counted afresh, `exactUnreadRepliesSql`). A
 * non-participant's cursor keeps 0. Replies of users the viewer blocks are left in the count and taken
 * out when it is read, for a viewer who blocks someone only, so blocking and unblocking write nothing.
 */
export const AFTER_EVERY_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff'; // the inbox's read position uses it too

/** The cursor `tr` as the API shows it: a position just before a message is that instant less 1 ms. */
export function threadReadAt(tr: string): string {
  return `CASE WHEN ${tr}.read_id = '${AFTER_EVERY_ID}' THEN ${tr}.read_at ELSE ${tr}.read_at - interval '1 millisecond' END`;
}

/**
 * The users `viewer` blocks, an array. With `viewer` a statement's parameter this is computed once per
 * statement (an InitPlan), not once per thread.
 */
function blockedBy(viewer: string): string {
  return `ARRAY(SELECT bl.blocked_id FROM blocks bl WHERE bl.blocker_id = ${viewer})`;
}

/** Reply `r` of thread `tr.root_id` is after cursor `tr` (the `messages_thread*` indexes serve it). */
function afterCursor(tr: string): string {
  return `r.thread_id = ${tr}.root_id AND r.created_at >= ${tr}.read_at AND (r.created_at, r.id) >= (${tr}.read_at, ${tr}.read_id)`;
}

/**
 * Cursor `tr`'s unread replies as user `viewer` (its owner) sees them: the kept count, less the live
 * replies after the cursor by users the viewer blocks (one probe of `messages_thread_author` per such
 * thread, for a viewer who blocks someone and has something unread there). 0 for a non-participant.
 */
export function unreadRepliesSql(tr: string, viewer: string): string {
  const blocked = blockedBy(viewer);
  return `(CASE WHEN NOT ${tr}.participant OR ${tr}.unread_replies = 0 THEN 0
     WHEN cardinality(${blocked}) = 0 THEN ${tr}.unread_replies
     ELSE ${tr}.unread_replies - (SELECT count(*) FROM messages r
       WHERE ${afterCursor(tr)} AND r.user_id = ANY (${blocked}) AND r.deleted_at IS NULL AND r.thread_no IS NOT NULL)::int END)`;
}

/**
 * The number of `viewer`'s threads in channel `channel` (SQL expressions) with unread replies, the
 * inbox's `unread_threads`: an index-only count of the cursors with a kept count (`thread_reads_unread`)
 * for a viewer who blocks nobody; otherwise each such cursor counted as `unreadRepliesSql` does, without
 * the threads whose root's author the viewer blocks.
 */
export function unreadThreadsSql(viewer: string, channel: string): string {
  const mine = `tr.user_id = ${viewer} AND tr.channel_id = ${channel} AND tr.participant AND tr.unread_replies > 0`;
  return `(CASE WHEN NOT EXISTS (SELECT 1 FROM blocks bl WHERE bl.blocker_id = ${viewer})
     THEN (SELECT count(*) FROM thread_reads tr WHERE ${mine})
     ELSE (SELECT count(*) FROM thread_reads tr JOIN messages root ON root.id = tr.root_id
            WHERE ${mine} AND NOT ${hiddenFrom('root', viewer)} AND ${unreadRepliesSql('tr', viewer)} > 0) END)::int`;
}

/**
 * The count a cursor of user `owner` at (`at`, `id`) in thread `t` (a message_threads row) would keep,
 * worked out from the thread's ordinals without scanning its replies: the ordinals given after the one at
 * the cursor (`reply_no` less one index probe), less those of replies removed outright
 * (`message_thread_gaps`), of unsent replies not the owner's (`messages_thread_unsent`) and of the
 * owner's own (`messages_thread_author`); shadowed replies have no ordinal. For a write that moves a
 * cursor back (thread unread) and for checking kept counts.
 */
export function exactUnreadRepliesSql(t: string, at: string, id: string, owner: string): string {
  const after = `r.created_at >= ${at} AND (r.created_at, r.id) >= (${at}, ${id}) AND r.thread_no > b.no`;
  return `(SELECT (${t}.reply_no - b.no
       - (SELECT count(*) FROM message_thread_gaps g WHERE g.root_id = ${t}.root_id AND g.thread_no > b.no)
       - (SELECT count(*) FROM messages r
           WHERE r.thread_id = ${t}.root_id AND r.deleted_at IS NOT NULL AND ${after} AND r.user_id IS DISTINCT FROM ${owner})
       - (SELECT count(*) FROM messages r WHERE r.thread_id = ${t}.root_id AND r.user_id = ${owner} AND ${after}))::int
       FROM (SELECT COALESCE((SELECT r.thread_no FROM messages r
                               WHERE r.thread_id = ${t}.root_id AND r.thread_no IS NOT NULL
                                 AND r.created_at <= ${at} AND (r.created_at, r.id) < (${at}, ${id})
                               ORDER BY r.created_at DESC, r.id DESC LIMIT 1), 0) AS no) b)`;
}

/**
 * Replies `$1` (ids: live, with an ordinal) stop counting (an unsend, an erasure's removal): every
 * other participant whose cursor is behind one loses it from their count. Run before the change, under
 * the channel's order lock.
 */
export const REPLIES_GONE = `UPDATE thread_reads tr SET unread_replies = tr.unread_replies - x.n
  FROM (SELECT c.root_id, c.user_id, count(*)::int AS n
          FROM messages r
          JOIN thread_reads c ON c.root_id = r.thread_id AND c.participant AND c.unread_replies > 0
                             AND c.user_id IS DISTINCT FROM r.user_id AND (c.read_at, c.read_id) <= (r.created_at, r.id)
         WHERE r.id = ANY ($1::uuid[]) AND r.thread_no IS NOT NULL AND r.deleted_at IS NULL
         GROUP BY c.root_id, c.user_id) x
 WHERE tr.root_id = x.root_id AND tr.user_id = x.user_id`;
