import { exactTime, isoTime } from '../../infra/database/sql';
import type { ExportSection } from '../export-document';
import { keysetList, NIL_UUID, pageSql, queryPage } from '../export-document';

const PAGE = pageSql(
  `SELECT json_build_object(
     'id', m.id, 'channel_id', m.channel_id, 'channel_external_id', c.external_id, 'type', m.type,
     'content', m.content, 'attachment_url', m.attachment_url, 'attachment', m.attachment,
     'metadata', COALESCE(m.metadata, '{}'::jsonb), 'parent_id', m.parent_id,
     'thread_id', m.thread_id, 'show_in_channel', m.show_in_channel, 'shadowed', m.shadowed,
     'created_at', ${isoTime('m.created_at')}, 'edited_at', ${isoTime('m.edited_at')},
     'deleted_at', ${isoTime('m.deleted_at')},
     'reactions', COALESCE((
       SELECT json_agg(json_build_object('emoji', r.emoji, 'user_external_id', ru.external_id,
                'created_at', ${isoTime('r.created_at')}) ORDER BY r.created_at, r.user_id)
         FROM reactions r JOIN users ru ON ru.id = r.user_id
        WHERE r.message_id = m.id), '[]'::json))::text AS json,
     m.channel_id AS channel_id, m.created_at AS created_at, ${exactTime('m.created_at')} AS created_key, m.id AS id
   FROM messages m JOIN channels c ON c.id = m.channel_id
   WHERE m.user_id = $1 AND m.workspace_id = $2
     AND (m.channel_id, m.created_at, m.id) > ($3::uuid, $4::timestamptz, $5::uuid)
   ORDER BY m.channel_id, m.created_at, m.id LIMIT $6`,
  'channel_id, created_at, id',
  ['channel_id', 'created_key', 'id'],
);

interface MessageKey {
  channelId: string;
  createdAt: string;
  id: string;
}

/**
 * `messages`: every message the user wrote, in any channel of the workspace (thread replies and unsent
 * ones too), in its final state: the content after the last edit, blank with `deleted_at` once unsent.
 * Each carries the reactions it received (emoji, who, when). Never a word of anyone else's messages:
 * not even the quoted parent's content (only `parent_id`).
 *
 * Keyset on (channel_id, created_at, id) through `messages_user_channel (user_id, channel_id,
 * created_at)`; created_at travels as exact text (microseconds), so no row is skipped or repeated.
 */
export const messagesSection: ExportSection = {
  key: 'messages',
  render: (ctx) =>
    keysetList<MessageKey>(ctx, (after, limit) =>
      queryPage(
        ctx,
        PAGE,
        [
          ctx.userId,
          ctx.workspaceId,
          after?.channelId ?? NIL_UUID,
          after?.createdAt ?? '-infinity',
          after?.id ?? NIL_UUID,
          limit,
        ],
        (r: { channel_id: string; created_key: string; id: string }) => ({
          channelId: r.channel_id,
          createdAt: r.created_key,
          id: r.id,
        }),
      ),
    ),
};
