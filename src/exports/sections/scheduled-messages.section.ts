import { mentionsAsExternalIds } from '../../drafts/drafts.service';
import { isoTime } from '../../infra/database/sql';
import { uuidKeyedSection } from '../export-document';

/** `scheduled_messages` (CONTRACT §25): the user's messages not sent yet, pending or failed. Keyset on id. */
export const scheduledMessagesSection = uuidKeyedSection(
  'scheduled_messages',
  `SELECT json_build_object('id', s.id, 'channel_id', s.channel_id, 'channel_external_id', c.external_id,
     'thread_id', s.thread_id, 'show_in_channel', s.show_in_channel, 'parent_id', s.parent_id, 'content', s.content,
     'attachment_url', s.attachment_url, 'mentions', ${mentionsAsExternalIds('s.mention_ids')}, 'metadata', s.metadata,
     'scheduled_at', ${isoTime('s.scheduled_at')}, 'status', s.status, 'error', s.error,
     'created_at', ${isoTime('s.created_at')}, 'updated_at', ${isoTime('s.updated_at')})::text AS json,
     s.id AS id
   FROM scheduled_messages s JOIN channels c ON c.id = s.channel_id
   WHERE s.user_id = $1 AND s.workspace_id = $2 AND s.id > $3::uuid
   ORDER BY s.id LIMIT $4`,
  'id',
);
