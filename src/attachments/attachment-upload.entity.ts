import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Channel } from '../channels/channel.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/** `attachment_uploads`: one row per presign, keyed by the object key; what `GET /files/<key>` serves from. */
@Entity({ name: 'attachment_uploads' })
@Check('attachment_uploads_size_bytes_check', `size_bytes >= 0`)
@Index('attachment_uploads_workspace', ['workspaceId', 'createdAt'])
@Index('attachment_uploads_user', ['userId'], { where: 'user_id IS NOT NULL' })
export class AttachmentUpload {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'attachment_uploads_pkey' })
  key!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'attachment_uploads_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'channel_id', nullable: true })
  channelId!: string | null;

  @ManyToOne(() => Channel, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'attachment_uploads_channel_id_fkey' })
  channel?: Relation<Channel> | null;

  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'attachment_uploads_user_id_fkey' })
  user?: Relation<User> | null;

  @Column('text')
  filename!: string;

  @Column('text', { name: 'mime_type' })
  mimeType!: string;

  @Column('bigint', { name: 'size_bytes' })
  sizeBytes!: number;

  /** The storage driver that signed the upload (local | s3). */
  @Column('text')
  driver!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'uploaded_at', nullable: true })
  uploadedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
