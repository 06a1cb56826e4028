import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelWrites } from '../channels/writes';
import { ChannelsRepository } from '../channels/channels.repository';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeIdCursor, pageOf } from '../common/pagination';
import { iso, isoNotNull } from '../common/time';
import { EventLogService } from '../events/event-log.service';
import type { BanPayload } from '../contract/events';
import { UsersRepository } from '../users/users.repository';
import { BanDto, BanListDto, BanListQueryDto, BanViewDto, ChannelBanDto } from './dto/ban.dto';
import { BanRow, BansRepository, NewBan } from './bans.repository';

const DEFAULT_LIMIT = 50;

/**
 * CONTRACT §19's bans. A ban is a row (one per user and scope) the write path reads in the same round
 * trip as membership and mute (ChannelWrites.read), so it costs a send no extra query. Setting or lifting
 * one fires `user.banned` / `user.unbanned` in the same transaction; the realtime publisher turns a
 * workspace-wide (not shadow) `user.banned` into a disconnect of the user's sockets on every instance.
 */
@Injectable()
export class BansService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: BansRepository,
    private readonly users: UsersRepository,
    private readonly channels: ChannelsRepository,
    private readonly writes: ChannelWrites,
    private readonly events: EventLogService,
  ) {}

  /** POST /v1/users/:external_id/ban: workspace-wide. */
  async banUser(workspaceId: string, externalId: string, dto: BanDto): Promise<BanViewDto> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    return this.db.transaction((m) =>
      this.banIn(m, workspaceId, { ...fields(dto), userId: user.id, channelId: null, byUserId: null }),
    );
  }

  /** DELETE /v1/users/:external_id/ban: 204 whether or not a ban was in force. */
  async unbanUser(workspaceId: string, externalId: string): Promise<void> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    await this.db.transaction((m) => this.liftIn(m, workspaceId, user.id, null));
  }

  /**
   * POST /v1/channels/:id/bans (backend key) and /v1/me/channels/:id/bans (an admin of the group). The
   * banned user need not be a member (a ban can come first); an admin cannot ban themselves.
   */
  async banInChannel(p: WorkspacePrincipal, channelRef: string, dto: ChannelBanDto): Promise<BanViewDto> {
    const { channel, actor } = await this.manage(p, channelRef);
    const user = await this.users.findByExternalId(p.workspaceId, dto.user_external_id);
    if (!user) throw AppError.validation('user_external_id', `unknown user ${dto.user_external_id}`);
    if (actor && actor.id === user.id)
      throw AppError.validation('user_external_id', 'you cannot ban yourself');
    return this.db.transaction((m) =>
      this.banIn(m, p.workspaceId, {
        ...fields(dto),
        userId: user.id,
        channelId: channel.id,
        byUserId: actor?.id ?? null,
      }),
    );
  }

  async unbanInChannel(p: WorkspacePrincipal, channelRef: string, externalId: string): Promise<void> {
    const { channel } = await this.manage(p, channelRef);
    const user = await this.users.findByExternalId(p.workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    await this.db.transaction((m) => this.liftIn(m, p.workspaceId, user.id, channel.id));
  }

  /** GET /v1/bans: bans in force, newest first. An unknown channel simply has none. */
  async list(workspaceId: string, q: BanListQueryDto): Promise<BanListDto> {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const beforeId = q.before !== undefined ? decodeIdCursor(q.before) : null;
    let channelId: string | null = null;
    if (q.channel !== undefined) {
      const channel = await this.channels.findByRef(
        this.db.manager,
        workspaceId,
        q.channel,
        isUuid(q.channel),
      );
      if (!channel) return { bans: [], has_more: false, next_cursor: null };
      channelId = channel.id;
    }
    const rows = await this.repo.list(this.db.manager, workspaceId, {
      channelId,
      beforeId,
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (r) => [r.id]);
    return { bans: page.items.map(banView), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  /** Bans (or re-bans) in the caller's transaction and fires `user.banned` with it (moderation's resolve uses it too). */
  async banIn(m: EntityManager, workspaceId: string, b: NewBan): Promise<BanViewDto> {
    const row = await this.repo.upsert(m, workspaceId, b);
    const view = banView(row);
    await this.events.append(m, { workspaceId, type: 'user.banned', payload: payloadOf(view) });
    return view;
  }

  /** Lifts a ban in the caller's transaction; `user.unbanned` only when one was in force. */
  async liftIn(
    m: EntityManager,
    workspaceId: string,
    userId: string,
    channelId: string | null,
  ): Promise<void> {
    const row = await this.repo.delete(m, workspaceId, userId, channelId);
    if (row)
      await this.events.append(m, { workspaceId, type: 'user.unbanned', payload: payloadOf(banView(row)) });
  }

  /**
   * The channel, for its bans: any channel for a backend key; for a user, a group they administer
   * (403 FORBIDDEN otherwise, and in a direct channel, where there is nobody to moderate for).
   */
  private async manage(p: WorkspacePrincipal, channelRef: string) {
    return this.writes.open(p, channelRef, 'ban_in_channel');
  }
}

function fields(dto: BanDto): Pick<NewBan, 'reason' | 'durationSeconds' | 'shadow'> {
  return {
    reason: dto.reason ?? null,
    durationSeconds: dto.duration_seconds ?? null,
    shadow: dto.shadow === true,
  };
}

function banView(r: BanRow): BanViewDto {
  return {
    id: r.id,
    user: { id: r.user_id, external_id: r.u_external_id, name: r.u_name },
    channel_id: r.channel_id,
    channel_external_id: r.channel_external_id,
    reason: r.reason,
    shadow: r.shadow,
    expires_at: iso(r.expires_at),
    created_at: isoNotNull(r.created_at),
    banned_by: r.by_id ? { id: r.by_id, external_id: r.by_external_id!, name: r.by_name } : null,
  };
}

function payloadOf(v: BanViewDto): BanPayload {
  return {
    user: v.user,
    channel_id: v.channel_id,
    reason: v.reason,
    expires_at: v.expires_at,
    shadow: v.shadow,
  };
}
