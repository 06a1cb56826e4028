import { isoTime } from '../../infra/database/sql';
import type { ExportSection } from '../export-document';
import { keysetList, NIL_UUID, pageSql, queryPage } from '../export-document';

const PAGE = pageSql(
  `SELECT json_build_object(
     'channel_id', c.id, 'channel_external_id', c.external_id, 'channel_type', c.type,
     'channel_name', c.name, 'role', cm.role, 'joined_at', ${isoTime('cm.joined_at')},
     'last_read_at', ${isoTime('cm.last_read_at')}, 'last_delivered_at', ${isoTime('cm.last_delivered_at')},
     'last_sent_at', ${isoTime('cm.last_sent_at')}, 'muted_until', ${isoTime('cm.muted_until')},
     'archived', cm.archived, 'hidden', cm.hidden_at IS NOT NULL)::text AS json,
     cm.channel_id AS channel_id
   FROM channel_members cm JOIN channels c ON c.id = cm.channel_id
   WHERE cm.user_id = $1 AND cm.workspace_id = $2 AND cm.channel_id > $3::uuid
   ORDER BY cm.channel_id LIMIT $4`,
  'channel_id',
  ['channel_id'],
);

/**
 * `memberships`: every channel the user belongs to, with the role, the read and delivered cursors and
 * the user's own channel state (CONTRACT §18). Keyset on channel_id (`channel_members_user`).
 */
export const membershipsSection: ExportSection = {
  key: 'memberships',
  render: (ctx) =>
    keysetList<string>(ctx, (after, limit) =>
      queryPage(
        ctx,
        PAGE,
        [ctx.userId, ctx.workspaceId, after ?? NIL_UUID, limit],
        (r: { channel_id: string }) => r.channel_id,
      ),
    ),
};
