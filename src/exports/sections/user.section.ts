import { isoTime } from '../../infra/database/sql';
import type { ExportContext, ExportSection } from '../export-document';
import { singleObject } from '../export-document';

/** `user`: the user record as the API shows it, with `last_seen_at`. */
export const userSection: ExportSection = {
  key: 'user',
  async *render(ctx: ExportContext) {
    const rows = await ctx.db.query<{ json: string }>(
      `SELECT json_build_object(
         'id', u.id, 'external_id', u.external_id, 'name', u.name, 'avatar_url', u.avatar_url,
         'metadata', u.metadata, 'last_seen_at', ${isoTime('u.last_seen_at')},
         'created_at', ${isoTime('u.created_at')}, 'updated_at', ${isoTime('u.updated_at')})::text AS json
       FROM users u WHERE u.id = $1 AND u.workspace_id = $2`,
      [ctx.userId, ctx.workspaceId],
    );
    // the user went away mid-build (erased): the export fails rather than ship a document without its owner
    if (!rows[0]) throw new Error('the user no longer exists');
    yield rows[0].json;
  },
};

/** `moderation_mute`: the workspace-wide mute a moderator (or the auto-mute rule) put on the user, or null. */
export const moderationMuteSection: ExportSection = {
  key: 'moderation_mute',
  render: (ctx) =>
    singleObject(
      ctx,
      `SELECT json_build_object('until', ${isoTime('mu.until')}, 'reason', mu.reason,
         'created_at', ${isoTime('mu.created_at')})::text AS json
       FROM mutes mu WHERE mu.user_id = $1 AND mu.workspace_id = $2`,
      [ctx.userId, ctx.workspaceId],
    ),
};
