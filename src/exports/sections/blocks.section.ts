import { isoTime } from '../../infra/database/sql';
import { uuidKeyedSection } from '../export-document';

/** `blocks`: the users this user blocked (not who blocked them). Keyset on blocked_id (`blocks_pkey`). */
export const blocksSection = uuidKeyedSection(
  'blocks',
  `SELECT json_build_object('user_id', b.blocked_id, 'external_id', u.external_id,
     'created_at', ${isoTime('b.created_at')})::text AS json,
     b.blocked_id AS blocked_id
   FROM blocks b JOIN users u ON u.id = b.blocked_id
   WHERE b.blocker_id = $1 AND b.workspace_id = $2 AND b.blocked_id > $3::uuid
   ORDER BY b.blocked_id LIMIT $4`,
  'blocked_id',
);
