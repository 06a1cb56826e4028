import { DRAFT_MENTIONS } from '../../drafts/drafts.service';
import { isoTime } from '../../infra/database/sql';
import { uuidKeyedSection } from '../export-document';

/** `drafts` (CONTRACT §24): the user's unsent drafts, as GET /v1/me/drafts shows them. Keyset on id. */
export const draftsSection = uuidKeyedSection(
  'drafts',
  `SELECT json_build_object('channel_id', d.channel_id, 'channel_external_id', c.external_id, 'thread_id', d.thread_id,
     'parent_id', d.parent_id, 'content', d.content, 'attachment_url', d.attachment_url, 'mentions', ${DRAFT_MENTIONS},
     'metadata', d.metadata, 'created_at', ${isoTime('d.created_at')}, 'updated_at', ${isoTime('d.updated_at')})::text AS json,
     d.id AS id
   FROM drafts d JOIN channels c ON c.id = d.channel_id
   WHERE d.user_id = $1 AND d.workspace_id = $2 AND d.id > $3::uuid
   ORDER BY d.id LIMIT $4`,
  'id',
);
