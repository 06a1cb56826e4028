import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `workspaces`: a tenant; deleting one cascades to its keys, users, channels, messages and the rest. */
@Entity({ name: 'workspaces' })
export class Workspace {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'workspaces_pkey' })
  id!: string;

  @Column('text')
  name!: string;

  @Column('jsonb', { default: {} })
  settings!: Record<string, unknown>;

  /** The operator's quotas for this workspace (src/admission/workspace-quotas.ts): each one set wins over the default. */
  @Column('jsonb', { default: {} })
  quotas!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
