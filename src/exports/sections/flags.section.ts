import { isoTime } from '../../infra/database/sql';
import { uuidKeyedSection } from '../export-document';

/**
 * `flags`: the reports this user made (CONTRACT §19): what they flagged (a message by id only, never its
 * content; a user by external id), why and when. Not the reports about them. Keyset on id (UUIDv7).
 */
export const flagsSection = uuidKeyedSection(
  'flags',
  `SELECT json_build_object('id', f.id, 'target_type', f.target_type, 'message_id', f.message_id,
     'user_external_id', tu.external_id, 'reason', f.reason, 'created_at', ${isoTime('f.created_at')})::text AS json,
     f.id AS id
   FROM flags f LEFT JOIN users tu ON tu.id = f.target_user_id
   WHERE f.by_user = $1 AND f.workspace_id = $2 AND f.id > $3::uuid
   ORDER BY f.id LIMIT $4`,
  'id',
);
