import { exactTime, isoTime } from '../../infra/database/sql';
import type { ExportSection } from '../export-document';
import { keysetList, pageSql, queryPage } from '../export-document';

/** Tokens this short or shorter show no characters at all (their last four would be most of them). */
const MIN_HINTED_TOKEN_LENGTH = 16;

const PAGE = pageSql(
  `SELECT json_build_object('platform', d.platform,
     'token_last4', CASE WHEN length(d.token) > ${MIN_HINTED_TOKEN_LENGTH} THEN right(d.token, 4) END,
     'token_length', length(d.token), 'created_at', ${isoTime('d.created_at')},
     'updated_at', ${isoTime('d.updated_at')})::text AS json,
     d.updated_at AS updated_at, ${exactTime('d.updated_at')} AS updated_key, d.token_sha256 AS sha
   FROM devices d
   WHERE d.user_id = $1 AND d.workspace_id = $2
     AND (d.updated_at, d.token_sha256) < ($3::timestamptz, $4::text)
   ORDER BY d.updated_at DESC, d.token_sha256 DESC LIMIT $5`,
  'updated_at DESC, sha DESC',
  ['updated_key', 'sha'],
);

/**
 * `devices`: the push registrations, never a token's value: its last four characters (`token_last4`,
 * null for tokens of 16 characters or fewer) and its length. Newest first, keyset on
 * (updated_at, token_sha256) through `devices_user (user_id, updated_at DESC)`.
 */
export const devicesSection: ExportSection = {
  key: 'devices',
  render: (ctx) =>
    keysetList<{ updatedAt: string; sha: string }>(ctx, (after, limit) =>
      queryPage(
        ctx,
        PAGE,
        [ctx.userId, ctx.workspaceId, after?.updatedAt ?? 'infinity', after?.sha ?? '', limit],
        (r: { updated_key: string; sha: string }) => ({ updatedAt: r.updated_key, sha: r.sha }),
      ),
    ),
};
