import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Channels, memberships, messages, mentions, reactions, blocks and mutes.
 *
 * Invariants held by the database, not by read-then-write:
 * - one direct channel per pair of users: UNIQUE (workspace_id, direct_pair);
 * - one reaction per user per message: PRIMARY KEY (message_id, user_id);
 * - one message per (sender, idempotency_key): UNIQUE (workspace_id, sender_key, idempotency_key).
 * `sender_key` is the sender's id as text (or 'system') and never changes, so deleting a user (which
 * nulls messages.user_id) cannot make two keys collide.
 */
export class Messaging1763690100000 implements MigrationInterface {
  name = 'Messaging1763690100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE channels (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('direct', 'group')),
        external_id text NOT NULL,
        name text,
        avatar_url text,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        direct_pair text,
        last_seq bigint NOT NULL DEFAULT 0,
        last_message_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT channels_workspace_external UNIQUE (workspace_id, external_id),
        CONSTRAINT channels_direct_pair UNIQUE (workspace_id, direct_pair)
      )`);
    await q.query(
      `CREATE INDEX channels_workspace_created ON channels (workspace_id, created_at DESC, id DESC)`,
    );
    await q.query(`
      CREATE TABLE channel_members (
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        role text CHECK (role IN ('admin', 'member')),
        joined_at timestamptz NOT NULL,
        last_read_at timestamptz NOT NULL,
        last_delivered_at timestamptz NOT NULL,
        PRIMARY KEY (channel_id, user_id)
      )`);
    await q.query(`CREATE INDEX channel_members_user ON channel_members (user_id, channel_id)`);
    await q.query(`
      CREATE TABLE messages (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        sender_key text NOT NULL,
        type text NOT NULL CHECK (type IN ('text', 'image', 'file', 'system')),
        content text NOT NULL DEFAULT '',
        attachment_url text,
        attachment jsonb,
        parent_id uuid REFERENCES messages(id) ON DELETE SET NULL,
        idempotency_key text,
        created_at timestamptz NOT NULL,
        edited_at timestamptz,
        deleted_at timestamptz,
        CONSTRAINT messages_idempotency UNIQUE (workspace_id, sender_key, idempotency_key)
      )`);
    // history pages and unread counts are range scans of this index; user_id/deleted_at ride along
    await q.query(
      `CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at)`,
    );
    await q.query(`CREATE INDEX messages_parent ON messages (parent_id) WHERE parent_id IS NOT NULL`);
    await q.query(`CREATE INDEX messages_user ON messages (user_id)`);
    await q.query(`
      CREATE TABLE message_mentions (
        message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        position smallint NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (message_id, user_id)
      )`);
    await q.query(`CREATE INDEX message_mentions_user ON message_mentions (user_id, channel_id, created_at)`);
    await q.query(`
      CREATE TABLE reactions (
        message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        emoji text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (message_id, user_id)
      )`);
    await q.query(`
      CREATE TABLE blocks (
        blocker_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        blocked_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (blocker_id, blocked_id),
        CHECK (blocker_id <> blocked_id)
      )`);
    await q.query(`CREATE INDEX blocks_blocked ON blocks (blocked_id)`);
    await q.query(`
      CREATE TABLE mutes (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        until timestamptz,
        reason text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'mutes',
      'blocks',
      'reactions',
      'message_mentions',
      'messages',
      'channel_members',
      'channels',
    ]) {
      await q.query(`DROP TABLE ${t}`);
    }
  }
}
