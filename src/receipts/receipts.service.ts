import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import { ChannelMembersRepository, MemberCursors } from '../channels/channel-members.repository';
import { ChannelWriteContext, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isoNotNull } from '../common/time';
import { isLarge } from '../workspaces/workspace-settings';
import { WorkspacesService } from '../workspaces/workspaces.service';

export interface Cursors {
  last_read_at: string;
  last_delivered_at: string;
}

/** Read and delivery cursors. They never move backwards; reading also delivers. */
@Injectable()
export class ReceiptsService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly writes: ChannelWrites,
    private readonly members: ChannelMembersRepository,
    private readonly workspaces: WorkspacesService,
  ) {}

  /**
   * Moves the read cursor; with read receipts on, `channel.read` takes the channel's next seq, except in
   * a large channel (CONTRACT §29), whose read state is not broadcast.
   */
  async markRead(p: WorkspacePrincipal, ref: string, userExternalId?: string): Promise<Cursors> {
    const settings = await this.workspaces.settings(p.workspaceId);
    const ctx = await this.target(p, ref, 'mark_read', userExternalId);
    const actor = ctx.actor!;
    if (!settings.read_receipts_enabled || isLarge(ctx.channel.member_count, settings))
      return this.cursors(await this.members.markRead(this.db.manager, ctx.channel.id, actor.id));
    return this.writes.write(ctx, async (s) => {
      const row = await this.members.markRead(s.m, s.channel.id, actor.id);
      if (!row) throw new AppError('NOT_A_MEMBER');
      await s.append('channel.read', {
        channel_id: s.channel.id,
        channel_external_id: s.channel.external_id,
        user_id: actor.id,
        external_id: actor.external_id,
        last_read_at: isoNotNull(row.last_read_at),
      });
      return this.cursors(row);
    });
  }

  async markDelivered(p: WorkspacePrincipal, ref: string, userExternalId?: string): Promise<Cursors> {
    const ctx = await this.target(p, ref, 'mark_delivered', userExternalId);
    return this.cursors(await this.members.markDelivered(this.db.manager, ctx.channel.id, ctx.actor!.id));
  }

  async list(p: WorkspacePrincipal, ref: string) {
    const { channel } = await this.access.open(p, ref);
    const rows = await this.members.cursors(this.db.manager, channel.id);
    return {
      members: rows.map((r) => ({
        external_id: r.external_id,
        last_delivered_at: isoNotNull(r.last_delivered_at),
        last_read_at: isoNotNull(r.last_read_at),
      })),
    };
  }

  /** Whose cursor moves: the JWT's user, or the backend's `user_external_id` (who must be a member). */
  private target(
    p: WorkspacePrincipal,
    ref: string,
    kind: 'mark_read' | 'mark_delivered',
    userExternalId?: string,
  ): Promise<ChannelWriteContext> {
    return this.writes.open(p, ref, kind, { userExternalId });
  }

  /** The cursors after an update; none when the member left meanwhile (403). */
  private cursors(row: MemberCursors | null): Cursors {
    if (!row) throw new AppError('NOT_A_MEMBER');
    return {
      last_read_at: isoNotNull(row.last_read_at),
      last_delivered_at: isoNotNull(row.last_delivered_at),
    };
  }
}
