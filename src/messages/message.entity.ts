import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { User } from '../users/user.entity';

/**
 * `messages`. Sends go through chat_send_message (a PL/pgSQL function of the migrations), which assigns
 * the id, created_at and the counters under the channel's order lock; no code inserts through TypeORM.
 */
@Entity({ name: 'messages' })
// only sends with a key can conflict (migration 1763691071000)
@Index('messages_idempotency', ['workspaceId', 'senderKey', 'idempotencyKey'], {
  unique: true,
  where: 'idempotency_key IS NOT NULL',
})
@Check('messages_type_check', `type IN ('text', 'image', 'file', 'system', 'poll')`)
// (channel_id, created_at DESC, id DESC) INCLUDE (user_id, deleted_at, channel_no) WHERE show_in_channel IS NOT FALSE:
// TypeORM cannot state descending keys or INCLUDE
@Index('messages_channel_time', { synchronize: false })
@Index('messages_channel_unsent', ['channelId', 'createdAt'], {
  where: 'deleted_at IS NOT NULL AND show_in_channel IS NOT FALSE',
})
@Index('messages_parent', ['parentId'], { where: 'parent_id IS NOT NULL' })
// (user_id, channel_id, created_at) INCLUDE (sender_no): TypeORM cannot state INCLUDE
@Index('messages_user_channel', { synchronize: false })
// (thread_id, created_at, id) INCLUDE (user_id) WHERE thread_id IS NOT NULL: TypeORM cannot state INCLUDE
@Index('messages_thread', { synchronize: false })
@Index('messages_thread_unsent', ['threadId', 'createdAt'], {
  where: 'thread_id IS NOT NULL AND deleted_at IS NOT NULL',
})
@Index('messages_thread_author', ['threadId', 'userId', 'createdAt'], { where: 'thread_id IS NOT NULL' })
export class Message {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'messages_pkey' })
  id!: string;

  /** Its channel's workspace: one key, (channel_id, workspace_id) → channels (id, workspace_id), checks both. */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('uuid', { name: 'channel_id' })
  channelId!: string;

  @ManyToOne(() => Channel, { onDelete: 'CASCADE' })
  @JoinColumn([
    {
      name: 'channel_id',
      referencedColumnName: 'id',
      foreignKeyConstraintName: 'messages_channel_workspace_fkey',
    },
    {
      name: 'workspace_id',
      referencedColumnName: 'workspaceId',
      foreignKeyConstraintName: 'messages_channel_workspace_fkey',
    },
  ])
  channel?: Relation<Channel>;

  /** Null for a system message and once the author is deleted. */
  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'messages_user_id_fkey' })
  user?: Relation<User> | null;

  /** The sender's id as text (or 'system'); never changes, so idempotency keys never collide. */
  @Column('text', { name: 'sender_key' })
  senderKey!: string;

  @Column('text')
  type!: 'text' | 'image' | 'file' | 'system';

  @Column('text', { default: '' })
  content!: string;

  @Column('text', { name: 'attachment_url', nullable: true })
  attachmentUrl!: string | null;

  @Column('jsonb', { nullable: true })
  attachment!: Record<string, unknown> | null;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'messages_parent_id_fkey' })
  parent?: Relation<Message> | null;

  @Column('text', { name: 'idempotency_key', nullable: true })
  idempotencyKey!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'edited_at', nullable: true })
  editedAt!: Date | null;

  /** Set by an unsend, which also blanks the content. */
  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;

  /**
   * The search document before migration 1763691090000 (now in message_search): no longer written nor
   * indexed, kept one release for the previous release's instances during a rolling deploy.
   */
  @Column({
    type: 'tsvector',
    name: 'search_doc',
    nullable: true,
    select: false,
    insert: false,
    update: false,
  })
  searchDoc?: string | null;

  /** The message's ordinal in the channel's conversation; null if it is not counted there. */
  @Column('bigint', { name: 'channel_no', nullable: true })
  channelNo!: number | null;

  /** The message's ordinal among its sender's counted messages in the channel. */
  @Column('bigint', { name: 'sender_no', nullable: true })
  senderNo!: number | null;

  /** A stored reply's ordinal in its thread (CONTRACT §23's unread arithmetic); null for a shadowed reply. */
  @Column('bigint', { name: 'thread_no', nullable: true })
  threadNo!: number | null;

  /** A reply's thread root; null on every other message. */
  @Column('uuid', { name: 'thread_id', nullable: true })
  threadId!: string | null;

  /** A reply's "also send to channel"; null on every other message. */
  @Column('boolean', { name: 'show_in_channel', nullable: true })
  showInChannel!: boolean | null;

  /** Null reads as `{}`. */
  @Column('jsonb', { nullable: true })
  metadata!: Record<string, unknown> | null;

  /** Sent while its author was shadow-banned: shown to its author and the backend only. */
  @Column('boolean', { default: false })
  shadowed!: boolean;

  /** CONTRACT §26: the link previews the worker found, in the order of their URLs in the content ([] until enriched). */
  @Column('jsonb', { default: () => "'[]'" })
  previews!: unknown[];

  /** CONTRACT §26: sent with `skip_previews`: its links are never fetched (nor after an edit). */
  @Column('boolean', { name: 'skip_previews', default: false })
  skipPreviews!: boolean;

  /**
   * CONTRACT §26: its links may be fetched on private networks too: the instance that took the send (or
   * the last edit) allows such targets (SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS), whichever worker fetches.
   */
  @Column('boolean', { name: 'previews_allow_private', default: false })
  previewsAllowPrivate!: boolean;
}
