import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * User erasure (CONTRACT §20): `DELETE /v1/users/:external_id?messages=keep|anonymize|delete`.
 *
 * A user's row cannot simply be deleted when they wrote a million messages: its foreign keys would
 * null (or cascade into) every one of them, and their reactions, mentions and uploads, in the one
 * transaction of the DELETE. So an erasure has two parts:
 * - at once, in one transaction: the user leaves their channels, their devices, blocks, mutes and bans
 *   go, and the row becomes an *erased placeholder*: `external_id`, name, avatar and metadata are
 *   cleared. With no external id no lookup finds it (API, tokens, member adds, search filters) and the
 *   external id is free for a new user; renderers show its messages, mentions and thread participation
 *   as those of no user. Hence `users.external_id` may now be null, and is null only on such a row.
 * - then in batches (`user_erasures`, one transaction each): the user's messages by channel (kept
 *   with `user_id` null, anonymized as an unsend does, or removed), their reactions, the mentions of
 *   them and their uploads' `user_id`; the last batch deletes the placeholder row, whose foreign keys
 *   then find nothing left to change.
 *
 * The batches walk the user's messages newest first by channel through `messages_user_channel`
 * (user_id, channel_id, created_at): the placeholder keeps `user_id` set on every message not yet
 * erased, so no index on `sender_key` is needed. The walk is a keyset (`cursor_channel`, `cursor_at`,
 * committed with each batch): a batch takes its messages out of the user's range (user_id null, or the
 * row removed), but their index entries stay until vacuumed, and a walk from the start of the range
 * would step over all of them again on every batch. Reactions, mentions and uploads are walked by
 * `reactions_user`, `message_mentions_user` and the new partial `attachment_uploads_user`.
 * `channels_created_by` and `bans_banned_by` serve the ON DELETE SET NULL of the last batch, which
 * scanned those tables before.
 *
 * `message_gaps`: the channel ordinals (`channel_no`) of messages removed outright. The inbox counts a
 * member's unread messages as `message_count` minus the ordinal at the read cursor; a removed message
 * leaves its ordinal behind, so the inbox subtracts the gaps past the cursor (an index range, empty
 * for almost every channel).
 */
export class UserErasure1763691030000 implements MigrationInterface {
  name = 'UserErasure1763691030000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ALTER COLUMN external_id DROP NOT NULL`);
    await q.query(`
      CREATE TABLE user_erasures (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        mode text NOT NULL CHECK (mode IN ('keep', 'anonymize', 'delete')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
        messages_done bigint NOT NULL DEFAULT 0,
        cursor_channel uuid,
        cursor_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    // no foreign key on user_id: the erasure outlives the row it deletes
    await q.query(`CREATE UNIQUE INDEX user_erasures_user ON user_erasures (user_id)`);
    await q.query(
      `CREATE INDEX user_erasures_pending ON user_erasures (updated_at) WHERE status = 'pending'`,
    );
    await q.query(`
      CREATE TABLE message_gaps (
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        channel_no bigint NOT NULL,
        PRIMARY KEY (channel_id, channel_no)
      )`);
    await q.query(
      `CREATE INDEX attachment_uploads_user ON attachment_uploads (user_id) WHERE user_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX channels_created_by ON channels (created_by) WHERE created_by IS NOT NULL`);
    await q.query(`CREATE INDEX bans_banned_by ON bans (banned_by) WHERE banned_by IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const i of ['bans_banned_by', 'channels_created_by', 'attachment_uploads_user'])
      await q.query(`DROP INDEX ${i}`);
    await q.query(`DROP TABLE message_gaps`);
    await q.query(`DROP TABLE user_erasures`);
    // placeholders of erasures that did not finish: their remaining messages keep user_id null
    await q.query(`DELETE FROM users WHERE external_id IS NULL`);
    await q.query(`ALTER TABLE users ALTER COLUMN external_id SET NOT NULL`);
  }
}
