import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';
import type { DevicePlatform } from './dto/device.dto';

/**
 * `devices`: push tokens, unique per workspace. A token may be 4,096 characters, longer than a btree
 * entry may be, so the key holds its SHA-256.
 */
@Entity({ name: 'devices' })
@Check('devices_platform_check', `platform IN ('ios', 'android', 'web')`)
// (user_id, updated_at DESC): TypeORM cannot state descending keys
@Index('devices_user', { synchronize: false })
export class Device {
  @PrimaryColumn('uuid', { name: 'workspace_id', primaryKeyConstraintName: 'devices_pkey' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'devices_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @PrimaryColumn('text', { name: 'token_sha256', primaryKeyConstraintName: 'devices_pkey' })
  tokenSha256!: string;

  @Column('text')
  token!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'devices_user_id_fkey' })
  user?: Relation<User>;

  @Column('text')
  platform!: DevicePlatform;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
