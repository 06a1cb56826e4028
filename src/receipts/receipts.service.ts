import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import type { ChannelRow } from '../channels/channels.repository';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isoNotNull } from '../common/time';
import { EventLogService } from '../events/event-log.service';
import { rows } from '../infra/database/sql';
import { orderChannelWrites } from '../events/channel-order';
import { UsersRepository } from '../users/users.repository';
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
    private readonly users: UsersRepository,
    private readonly events: EventLogService,
    private readonly workspaces: WorkspacesService,
  ) {}

  async markRead(p: WorkspacePrincipal, ref: string, userExternalId?: string): Promise<Cursors> {
    const readReceipts = (await this.workspaces.settings(p.workspaceId)).read_receipts_enabled;
    return this.db.transaction(async (m) => {
      const { channel, userId, externalId } = await this.target(m, p, ref, userExternalId);
      if (readReceipts) await orderChannelWrites(m, [channel.id]); // channel.read takes a seq
      const updated = await rows<{ last_read_at: Date; last_delivered_at: Date }>(
        m,
        `UPDATE channel_members SET last_read_at = GREATEST(last_read_at, clock_timestamp()),
                last_delivered_at = GREATEST(last_delivered_at, clock_timestamp())
          WHERE channel_id = $1 AND user_id = $2 RETURNING last_read_at, last_delivered_at`,
        [channel.id, userId],
      );
      const row = updated[0]!;
      if (readReceipts) {
        await this.events.append(m, {
          workspaceId: p.workspaceId,
          channelId: channel.id,
          type: 'channel.read',
          payload: {
            channel_id: channel.id,
            channel_external_id: channel.external_id,
            user_id: userId,
            external_id: externalId,
            last_read_at: isoNotNull(row.last_read_at),
          },
        });
      }
      return {
        last_read_at: isoNotNull(row.last_read_at),
        last_delivered_at: isoNotNull(row.last_delivered_at),
      };
    });
  }

  async markDelivered(p: WorkspacePrincipal, ref: string, userExternalId?: string): Promise<Cursors> {
    return this.db.transaction(async (m) => {
      const { channel, userId } = await this.target(m, p, ref, userExternalId);
      const updated = await rows<{ last_read_at: Date; last_delivered_at: Date }>(
        m,
        `UPDATE channel_members SET last_delivered_at = GREATEST(last_delivered_at, clock_timestamp())
          WHERE channel_id = $1 AND user_id = $2 RETURNING last_read_at, last_delivered_at`,
        [channel.id, userId],
      );
      const row = updated[0]!;
      return {
        last_read_at: isoNotNull(row.last_read_at),
        last_delivered_at: isoNotNull(row.last_delivered_at),
      };
    });
  }

  async list(p: WorkspacePrincipal, ref: string) {
    const { channel } = await this.access.open(p, ref);
    const rows: { external_id: string; last_read_at: Date; last_delivered_at: Date }[] = await this.db.query(
      `SELECT u.external_id, cm.last_read_at, cm.last_delivered_at FROM channel_members cm JOIN users u ON u.id = cm.user_id
        WHERE cm.channel_id = $1 ORDER BY cm.joined_at, u.external_id`,
      [channel.id],
    );
    return {
      members: rows.map((r) => ({
        external_id: r.external_id,
        last_delivered_at: isoNotNull(r.last_delivered_at),
        last_read_at: isoNotNull(r.last_read_at),
      })),
    };
  }

  /** Whose cursor moves: the JWT's user, or the backend's `user_external_id` (who must be a member). */
  private async target(m: EntityManager, p: WorkspacePrincipal, ref: string, userExternalId?: string) {
    const channel: ChannelRow = await this.access.resolve(p.workspaceId, ref, m);
    let userId: string;
    let externalId: string;
    if (p.kind === 'user') {
      if (userExternalId !== undefined && userExternalId !== p.externalId) {
        throw AppError.validation('user_external_id', 'is only for backend keys');
      }
      userId = p.userId;
      externalId = p.externalId;
    } else {
      if (!userExternalId) throw AppError.validation('user_external_id', 'is required with a workspace key');
      const user = await this.users.findByExternalId(p.workspaceId, userExternalId, m);
      if (!user) throw AppError.validation('user_external_id', `unknown user ${userExternalId}`);
      userId = user.id;
      externalId = user.external_id;
    }
    const member: unknown[] = await m.query(
      `SELECT 1 FROM channel_members WHERE channel_id = $1 AND user_id = $2`,
      [channel.id, userId],
    );
    if (!member.length) throw new AppError('NOT_A_MEMBER');
    return { channel, userId, externalId };
  }
}
