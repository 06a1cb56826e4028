import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import { ChannelMembersRepository, MemberCursors } from '../channels/channel-members.repository';
import { ChannelWriteContext, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isoNotNull } from '../common/time';
import { isUuid } from '../common/ids';
import type { ChannelMarkedUnread } from '../contract/events';
import { EventLogService } from '../events/event-log.service';
import { MyChannelsService } from '../channels/my-channels.service';
import { hiddenFrom } from '../messages/visibility';
import { isLarge } from '../workspaces/workspace-settings';
import { WorkspacesService } from '../workspaces/workspaces.service';

export interface Cursors {
  last_read_at: string;
  last_delivered_at: string;
}

/**
 * Read and delivery cursors. They never move backwards (reading also delivers), with one exception
 * for the member's own view: mark unread (CONTRACT §22) puts their read position just before a
 * message, which their unread counts follow; `last_read_at` stays the highest position ever read, which
 * receipts and `channel.read` show.
 */
@Injectable()
export class ReceiptsService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly writes: ChannelWrites,
    private readonly members: ChannelMembersRepository,
    private readonly workspaces: WorkspacesService,
    private readonly mine: MyChannelsService,
    private readonly events: EventLogService,
  ) {}

  /**
   * CONTRACT §22: the member's read position to just before the message (a message of the channel's
   * history as they see it), their counts after it, and `notification.mark_unread` to their own sockets
   * (an event with the member as audience, in the same transaction). Nothing for others, no webhook.
   */
  async markUnread(
    p: WorkspacePrincipal,
    ref: string,
    messageId: string,
    userExternalId?: string,
  ): Promise<ChannelMarkedUnread> {
    const ctx = await this.target(p, ref, 'mark_read', userExternalId);
    const actor = ctx.actor!;
    if (!isUuid(messageId)) throw AppError.notFound('Message');
    return this.db.transaction(async (m) => {
      // the message as the member sees the channel's history; the position moves to it only when it may
      // (its exact instant, to the microsecond, and id: before it and after everything earlier)
      const [msg] = await m.query<{ deleted: boolean; thread_only: boolean; moved: boolean }[]>(
        `WITH msg AS (
           SELECT msg.id, msg.created_at, msg.deleted_at IS NOT NULL AS deleted, msg.show_in_channel IS FALSE AS thread_only
             FROM messages msg WHERE msg.id = $1 AND msg.channel_id = $2 AND NOT ${hiddenFrom('msg', '$3::uuid')}),
         moved AS (
           UPDATE channel_members cm SET unread_at = msg.created_at, unread_id = msg.id
             FROM msg WHERE NOT msg.deleted AND NOT msg.thread_only AND cm.channel_id = $2 AND cm.user_id = $3
           RETURNING 1)
         SELECT msg.deleted, msg.thread_only, EXISTS (SELECT 1 FROM moved) AS moved FROM msg`,
        [messageId, ctx.channel.id, actor.id],
      );
      if (!msg) throw AppError.notFound('Message');
      if (msg.thread_only)
        throw AppError.validation(
          'message_id',
          'is a reply shown only in its thread: mark the thread unread instead',
        );
      if (msg.deleted) throw new AppError('MESSAGE_DELETED');
      const state = msg.moved ? await this.mine.readState(m, actor.id, ctx.channel.id) : null;
      if (!state) throw new AppError('NOT_A_MEMBER'); // left meanwhile
      const payload: ChannelMarkedUnread = {
        channel_id: ctx.channel.id,
        thread_id: null,
        message_id: messageId,
        ...state,
      };
      await this.events.append(m, {
        workspaceId: p.workspaceId,
        type: 'notification.mark_unread',
        payload,
        audience: [actor.id],
      });
      return payload;
    });
  }

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
