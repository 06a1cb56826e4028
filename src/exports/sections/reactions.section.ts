import { isoTime } from '../../infra/database/sql';
import type { ExportSection } from '../export-document';
import { keysetList, NIL_UUID, pageSql, queryPage } from '../export-document';

const PAGE = pageSql(
  `SELECT json_build_object('message_id', r.message_id, 'channel_id', r.channel_id,
     'channel_external_id', c.external_id, 'emoji', r.emoji,
     'created_at', ${isoTime('r.created_at')})::text AS json,
     r.message_id AS message_id
   FROM reactions r JOIN channels c ON c.id = r.channel_id
   WHERE r.user_id = $1 AND c.workspace_id = $2 AND r.message_id > $3::uuid
   ORDER BY r.message_id LIMIT $4`,
  'message_id',
  ['message_id'],
);

/**
 * `reactions`: the reactions the user made, on anyone's message: which message, the emoji and when;
 * never the message's content. Keyset on message_id (`reactions_user_message`).
 */
export const reactionsSection: ExportSection = {
  key: 'reactions',
  render: (ctx) =>
    keysetList<string>(ctx, (after, limit) =>
      queryPage(
        ctx,
        PAGE,
        [ctx.userId, ctx.workspaceId, after ?? NIL_UUID, limit],
        (r: { message_id: string }) => r.message_id,
      ),
    ),
};
