import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { ChannelMembersRepository, MemberRow } from './channel-members.repository';
import { ChannelRow, ChannelsRepository } from './channels.repository';

/**
 * The one place that turns a `:id` path value into a channel of the caller's workspace and applies
 * SPEC.md's rule 1: a user JWT must be a member (403 NOT_A_MEMBER); a backend key is never checked.
 */
@Injectable()
export class ChannelAccess {
  constructor(
    private readonly db: DataSource,
    private readonly channels: ChannelsRepository,
    private readonly members: ChannelMembersRepository,
  ) {}

  /** The channel by id (tried first) or external_id; 404 when it is not in this workspace. */
  async resolve(
    workspaceId: string,
    ref: string,
    m: EntityManager = this.db.manager,
  ): Promise<ChannelRow> {
    if (!ref || ref.length > 200) throw AppError.notFound('Channel');
    const row = await this.channels.findByRef(m, workspaceId, ref, isUuid(ref));
    if (!row) throw AppError.notFound('Channel');
    return row;
  }

  /** Membership of a user JWT caller (403 NOT_A_MEMBER otherwise); null for a backend key. */
  async requireMember(
    p: WorkspacePrincipal,
    channel: ChannelRow,
    m: EntityManager = this.db.manager,
  ): Promise<MemberRow | null> {
    if (p.kind === 'backend') return null;
    const member = await this.members.member(m, channel.id, p.userId);
    if (!member) throw new AppError('NOT_A_MEMBER');
    return member;
  }

  /** resolve + requireMember in one call, the common case of every channel read. */
  async open(
    p: WorkspacePrincipal,
    ref: string,
    m: EntityManager = this.db.manager,
  ): Promise<{ channel: ChannelRow; member: MemberRow | null }> {
    const channel = await this.resolve(p.workspaceId, ref, m);
    const member = await this.requireMember(p, channel, m);
    return { channel, member };
  }
}
