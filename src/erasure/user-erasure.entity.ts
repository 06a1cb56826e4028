import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Workspace } from '../workspaces/workspace.entity';

/**
 * `user_erasures`: a user's erasure, run in batches that walk the user's messages by a keyset
 * (`cursor_channel`, `cursor_at`). `user_id` is a plain id: the erasure outlives the row it deletes.
 */
@Entity({ name: 'user_erasures' })
@Check('user_erasures_mode_check', `mode IN ('keep', 'anonymize', 'delete')`)
@Check('user_erasures_status_check', `status IN ('pending', 'done')`)
@Index('user_erasures_user', ['userId'], { unique: true })
@Index('user_erasures_pending', ['updatedAt'], { where: `status = 'pending'` })
export class UserErasure {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'user_erasures_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'user_erasures_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('text')
  mode!: 'keep' | 'anonymize' | 'delete';

  @Column('text', { default: 'pending' })
  status!: 'pending' | 'done';

  @Column('bigint', { name: 'messages_done', default: 0 })
  messagesDone!: number;

  @Column('uuid', { name: 'cursor_channel', nullable: true })
  cursorChannel!: string | null;

  @Column('timestamptz', { name: 'cursor_at', nullable: true })
  cursorAt!: Date | null;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'finished_at', nullable: true })
  finishedAt!: Date | null;
}
