import { createHash } from 'crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { decodeCursor, decodeTimeIdCursor, pageOf } from '../common/pagination';
import { isoNotNull } from '../common/time';
import type { ChannelPayload } from '../contract/events';
import { UsersRepository, UserRow } from '../users/users.repository';
import { ChannelAccess } from './channel-access.service';
import { ChannelMembersRepository, MemberRole } from './channel-members.repository';
import { ChannelMembership } from './channel-membership';
import { ChannelWriteSession, ChannelWrites } from './writes';
import { PresenceReader } from './presence-reader';
import { ChannelRow, ChannelsRepository } from './channels.repository';
import type { ChannelListQuery } from './channel-list-query.pipe';
import { CreateChannelDto, UpdateChannelDto } from './dto/channel.dto';

/** CONTRACT §6: `dm_` + the first 32 hex characters of SHA-256 of the two external ids, sorted, joined by \n. */
export function directExternalId(a: string, b: string): string {
  const [x, y] = [a, b].sort();
  return `dm_${createHash('sha256').update(`${x}\n${y}`).digest('hex').slice(0, 32)}`;
}

@Injectable()
export class ChannelsService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: ChannelsRepository,
    private readonly access: ChannelAccess,
    private readonly members: ChannelMembersRepository,
    private readonly users: UsersRepository,
    private readonly writes: ChannelWrites,
    private readonly presenceReader: PresenceReader,
    private readonly membership: ChannelMembership,
  ) {}

  async create(
    workspaceId: string,
    dto: CreateChannelDto,
  ): Promise<{ channel: ChannelPayload; created: boolean }> {
    const wanted = [
      ...new Set([...(dto.created_by ? [dto.created_by] : []), ...(dto.member_external_ids ?? [])]),
    ];
    if (dto.type === 'direct') {
      const given = [...(dto.created_by ? [dto.created_by] : []), ...(dto.member_external_ids ?? [])];
      if (
        wanted.length !== 2 ||
        given.length > 3 ||
        (given.length === 3 && !(dto.member_external_ids ?? []).includes(dto.created_by!))
      ) {
        throw AppError.validation('member_external_ids', 'a direct channel needs exactly two distinct users');
      }
      if (dto.avatar_url !== undefined)
        throw AppError.validation('avatar_url', 'direct channels have no avatar');
      if (dto.slow_mode_seconds !== undefined)
        throw AppError.validation('slow_mode_seconds', 'direct channels have no slow mode');
    }
    return this.db.transaction(async (m) => {
      const users = await this.requireUsers(m, workspaceId, wanted, dto.created_by);
      const creator = dto.created_by ? users.get(dto.created_by)! : null;
      const id = newId();
      let pair: string | null = null;
      let externalId = dto.external_id!;
      if (dto.type === 'direct') {
        const [a, b] = wanted.map((x) => users.get(x)!);
        pair = [a!.id, b!.id].sort().join(':');
        externalId = dto.external_id ?? directExternalId(a!.external_id, b!.external_id);
        const existing = await this.repo.findDirect(m, workspaceId, pair);
        if (existing) return { channel: await this.view(m, existing), created: false };
      }
      let session: ChannelWriteSession | null;
      try {
        session = await this.writes.create(m, id, async () => {
          const inserted = await this.repo.insert(m, {
            id,
            workspaceId,
            type: dto.type,
            externalId,
            name: dto.name ?? null,
            avatarUrl: dto.avatar_url ?? null,
            createdBy: creator?.id ?? null,
            directPair: pair,
            frozen: dto.frozen ?? false,
            slowModeSeconds: dto.slow_mode_seconds ?? 0,
            metadata: dto.metadata ?? {},
          });
          return inserted ? this.repo.byId(m, workspaceId, id) : null;
        });
      } catch (e) {
        if ((e as { code?: string }).code === '23505')
          throw AppError.validation('external_id', 'is already used by another channel');
        throw e;
      }
      if (!session) {
        // a concurrent create of the same pair won the race (it has committed by now), or the
        // external_id belongs to another channel
        const existing = pair ? await this.repo.findDirect(m, workspaceId, pair) : null;
        if (!existing) throw AppError.validation('external_id', 'is already used by another channel');
        return { channel: await this.view(m, existing), created: false };
      }
      const members = wanted.map((x) => {
        const u = users.get(x)!;
        const role: MemberRole | null =
          dto.type === 'direct' ? null : u.id === creator?.id ? 'admin' : 'member';
        return { id: u.id, role };
      });
      await this.members.add(m, workspaceId, id, members);
      const channel = await this.view(m, session.channel);
      await session.append(
        'channel.created',
        { channel },
        members.map((x) => x.id),
      );
      return { channel, created: true };
    });
  }

  async get(workspaceId: string, ref: string): Promise<ChannelPayload> {
    const row = await this.access.resolve(workspaceId, ref);
    return this.view(this.db.manager, row);
  }

  async list(workspaceId: string, q: ChannelListQuery) {
    const limit = q.limit ?? 50;
    const cursor = q.before ? decodeTimeIdCursor(q.before) : undefined;
    let memberId: string | undefined;
    if (q.member) {
      const u = await this.users.findByExternalId(workspaceId, q.member);
      if (!u) return { channels: [], has_more: false, next_cursor: null };
      memberId = u.id;
    }
    const rows = await this.repo.list(this.db.manager, workspaceId, {
      memberId,
      type: q.type,
      metadata: q.metadata,
      limit,
      before: cursor ? { createdAt: cursor.key, id: cursor.id } : undefined,
    });
    const page = pageOf(rows, limit, (r) => [r.created_key!, r.id]);
    return {
      channels: await this.repo.views(this.db.manager, page.items),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  async update(p: WorkspacePrincipal, ref: string, dto: UpdateChannelDto): Promise<ChannelPayload> {
    let ctx = await this.writes.open(p, ref, 'update_channel');
    if (ctx.channel.type === 'direct') {
      // a direct channel keeps its name and avatar and has no slow mode; frozen and metadata are the backend's
      const fixed = (['name', 'avatar_url', 'slow_mode_seconds'] as const).find((f) => dto[f] !== undefined);
      if (fixed) throw AppError.validation(fixed, 'direct channels cannot change this');
      ctx = { ...ctx, kind: 'update_direct_channel' };
      this.writes.enforce(ctx);
    }
    return this.writes.write(ctx, async (s) => {
      await this.repo.update(s.m, s.channel.id, dto);
      const view = await this.view(s.m, await s.reload());
      await s.append('channel.updated', { channel: view });
      return view;
    });
  }

  async delete(p: WorkspacePrincipal, ref: string): Promise<void> {
    const ctx = await this.writes.open(p, ref, 'delete_channel');
    await this.writes.write(ctx, async (s) => {
      const view = await this.view(s.m, s.channel);
      const memberIds = (await this.members.members(s.m, [s.channel.id])).map((x) => x.user_id);
      await s.append('channel.deleted', { channel: view }, memberIds);
      await this.repo.delete(s.m, s.channel.id);
    });
  }

  async addMembers(p: WorkspacePrincipal, ref: string, externalIds: string[]): Promise<ChannelPayload> {
    const ctx = await this.writes.open(p, ref, 'add_members');
    if (ctx.channel.type === 'direct')
      throw AppError.validation('member_external_ids', 'direct channels cannot change members');
    const wanted = [...new Set(externalIds)];
    const users = await this.requireUsers(this.db.manager, p.workspaceId, wanted);
    return this.writes.write(ctx, async (s) => {
      const added = await this.members.add(
        s.m,
        p.workspaceId,
        s.channel.id,
        wanted.map((x) => ({ id: users.get(x)!.id, role: 'member' as const })),
      );
      const byId = new Map([...users.values()].map((u) => [u.id, u]));
      await this.membership.memberChanged(
        s,
        'member.joined',
        added.map((userId) => byId.get(userId)!),
      );
      if (added.length && (await this.membership.noticesEnabled(s.m, p.workspaceId))) {
        const notice = this.membership.addedNotice(
          ctx.actor,
          wanted.map((x) => users.get(x)!).filter((u) => added.includes(u.id)),
        );
        await this.membership.postNotice(s, notice);
      }
      return this.view(s.m, s.channel);
    });
  }

  async removeMembers(p: WorkspacePrincipal, ref: string, externalIds: string[]): Promise<void> {
    const wanted = [...new Set(externalIds)];
    const onlySelf = p.kind === 'user' && wanted.length === 1 && wanted[0] === p.externalId;
    const ctx = await this.writes.open(p, ref, onlySelf ? 'leave' : 'remove_members');
    if (ctx.channel.type === 'direct')
      throw AppError.validation('member_external_ids', 'direct channels cannot change members');
    const users = await this.requireUsers(this.db.manager, p.workspaceId, wanted);
    await this.writes.write(ctx, async (s) => {
      const removed = await this.members.remove(
        s.m,
        s.channel.id,
        [...users.values()].map((u) => u.id),
      );
      const byId = new Map([...users.values()].map((u) => [u.id, u]));
      await this.membership.memberChanged(
        s,
        'member.left',
        removed.map((userId) => byId.get(userId)!),
      );
      if (removed.length && (await this.membership.noticesEnabled(s.m, p.workspaceId))) {
        const notice = this.membership.removedNotice(
          ctx.actor,
          wanted.map((x) => users.get(x)!).filter((u) => removed.includes(u.id)),
          onlySelf,
        );
        await this.membership.postNotice(s, notice);
      }
      if (removed.length) await this.membership.ensureAnAdmin(s);
    });
  }

  async setRole(
    p: WorkspacePrincipal,
    ref: string,
    externalId: string,
    role: MemberRole,
  ): Promise<ChannelPayload> {
    const ctx = await this.writes.open(p, ref, 'set_role');
    if (ctx.channel.type === 'direct') throw AppError.validation('role', 'direct channels have no roles');
    return this.writes.write(ctx, async (s) => {
      const user = await this.users.findByExternalId(p.workspaceId, externalId, s.m);
      const target = user ? await this.members.member(s.m, s.channel.id, user.id) : null;
      if (!user || !target) throw AppError.notFound('Member');
      if (target.role === role) return this.view(s.m, s.channel);
      if (role === 'member') {
        const admins = (await this.members.members(s.m, [s.channel.id])).filter((x) => x.role === 'admin');
        if (admins.length <= 1) throw new AppError('LAST_ADMIN');
      }
      await this.members.setRole(s.m, s.channel.id, user.id, role);
      await s.appendMemberEvents('member.role_changed', [
        {
          channel_id: s.channel.id,
          channel_external_id: s.channel.external_id,
          user_id: user.id,
          external_id: user.external_id,
          role,
        },
      ]);
      return this.view(s.m, s.channel);
    });
  }

  private async requireUsers(
    m: EntityManager,
    workspaceId: string,
    externalIds: string[],
    createdBy?: string,
  ): Promise<Map<string, UserRow>> {
    const rows = await this.users.findManyByExternalIds(workspaceId, externalIds, m);
    const found = new Map(rows.map((r) => [r.external_id, r]));
    const missing = externalIds.filter((x) => !found.has(x));
    if (missing.length) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Unknown users: ${missing.join(', ')}`,
        missing.map((x) => ({
          field: x === createdBy ? 'created_by' : 'member_external_ids',
          message: `unknown user ${x}`,
        })),
      );
    }
    return found;
  }

  private async view(m: EntityManager, row: ChannelRow): Promise<ChannelPayload> {
    const [v] = await this.repo.views(m, [row]);
    return v!;
  }

  /**
   * Members with role and presence, a page at a time (CONTRACT §29): online members first, then offline,
   * each by external_id; `online_count` over the whole channel. The cursor is the last member's sort key.
   */
  async presence(p: WorkspacePrincipal, ref: string, limit: number, cursor?: string) {
    const after = cursor ? (decodeCursor(cursor, ['number', 'string'], 'cursor') as [number, string]) : null;
    const { channel } = await this.access.open(p, ref);
    const rows = await this.members.lastSeen(this.db.manager, channel.id);
    const online = await this.presenceReader.onlineOf(rows.map((r) => r.user_id));
    const key = (r: { user_id: string; external_id: string }): [number, string] => [
      online.has(r.user_id) ? 0 : 1,
      r.external_id,
    ];
    const byKey = (a: [number, string], b: [number, string]) =>
      a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const sorted = rows.map((r) => ({ r, k: key(r) })).sort((a, b) => byKey(a.k, b.k));
    const rest = after ? sorted.filter((x) => byKey(x.k, after) > 0) : sorted;
    const page = pageOf(rest.slice(0, limit + 1), limit, (x) => x.k);
    return {
      members: page.items.map(({ r }) => ({
        external_id: r.external_id,
        role: channel.type === 'direct' ? null : r.role,
        online: online.has(r.user_id),
        last_seen_at: r.last_seen_at ? isoNotNull(r.last_seen_at) : null,
      })),
      online_count: rows.filter((r) => online.has(r.user_id)).length,
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }
}
