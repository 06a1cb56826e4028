import { isoTime } from '../../infra/database/sql';
import type { ExportSection } from '../export-document';
import { keysetList, NIL_UUID, pageSql, queryPage } from '../export-document';

const PAGE = pageSql(
  `SELECT json_build_object('poll_id', v.poll_id, 'message_id', p.message_id, 'channel_id', m.channel_id,
     'question', p.question, 'option_id', v.option_id, 'option', o.text,
     'created_at', ${isoTime('v.created_at')})::text AS json,
     v.option_id AS option_id
   FROM poll_votes v JOIN polls p ON p.id = v.poll_id JOIN poll_options o ON o.id = v.option_id
   JOIN messages m ON m.id = p.message_id
   WHERE v.user_id = $1 AND p.workspace_id = $2 AND v.option_id > $3::uuid
   ORDER BY v.option_id LIMIT $4`,
  'option_id',
  ['option_id'],
);

/**
 * `poll_votes`: the options the user chose in polls (CONTRACT §28), anonymous ones too (their own
 * choices): the poll, its question, the option and when. Keyset on option_id (unique per user).
 */
export const pollVotesSection: ExportSection = {
  key: 'poll_votes',
  render: (ctx) =>
    keysetList<string>(ctx, (after, limit) =>
      queryPage(
        ctx,
        PAGE,
        [ctx.userId, ctx.workspaceId, after ?? NIL_UUID, limit],
        (r: { option_id: string }) => r.option_id,
      ),
    ),
};
