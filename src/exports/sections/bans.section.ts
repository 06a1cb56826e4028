import { isoTime } from '../../infra/database/sql';
import { uuidKeyedSection } from '../export-document';

/**
 * `bans`: the user's bans (CONTRACT §19), workspace-wide (`channel_id` null) or per channel, shadow or
 * not, with their reason and expiry; one that ran out stays until replaced. The document goes to the
 * backend, which decides what of it reaches the user. Keyset on id (UUIDv7).
 */
export const bansSection = uuidKeyedSection(
  'bans',
  `SELECT json_build_object('id', bn.id, 'channel_id', bn.channel_id, 'channel_external_id', c.external_id,
     'shadow', bn.shadow, 'reason', bn.reason, 'expires_at', ${isoTime('bn.expires_at')},
     'created_at', ${isoTime('bn.created_at')})::text AS json,
     bn.id AS id
   FROM bans bn LEFT JOIN channels c ON c.id = bn.channel_id
   WHERE bn.user_id = $1 AND bn.workspace_id = $2 AND bn.id > $3::uuid
   ORDER BY bn.id LIMIT $4`,
  'id',
);
