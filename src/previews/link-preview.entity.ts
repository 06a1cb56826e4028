import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Workspace } from '../workspaces/workspace.entity';

/** `link_previews`: the previews cache (CONTRACT §26), per workspace and URL, kept for an hour. */
@Entity({ name: 'link_previews' })
@Index('link_previews_expiry', ['fetchedAt'])
export class LinkPreview {
  @PrimaryColumn('uuid', { name: 'workspace_id', primaryKeyConstraintName: 'link_previews_pkey' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'link_previews_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'link_previews_pkey' })
  url!: string;

  /** What the fetch found; null: no preview (not HTML, no title, an error). */
  @Column('jsonb', { nullable: true })
  preview!: Record<string, unknown> | null;

  @Column('timestamptz', { name: 'fetched_at' })
  fetchedAt!: Date;
}
