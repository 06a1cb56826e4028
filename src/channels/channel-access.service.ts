import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { prepared } from '../infra/database/prepared';
import { CHANNEL_COLUMNS, ChannelRow } from './channels.repository';

/**
 * The one place that turns a `:id` path value into a channel of the caller's workspace for a read and
 * applies SPEC.md's rule 1: a user JWT must be a member (403 NOT_A_MEMBER); a backend key is never
 * checked. One round trip. Writes go through ChannelWrites, which applies the same rule.
 */
@Injectable()
export class ChannelAccess {
  constructor(private readonly db: DataSource) {}

  /** The channel by id (tried first) or external_id; 404 when it is not in this workspace. */
  async resolve(workspaceId: string, ref: string, m: EntityManager = this.db.manager): Promise<ChannelRow> {
    return (await this.find(m, workspaceId, ref, null)).channel;
  }

  /** resolve + the membership of a user JWT caller, the common case of every channel read. */
  async open(
    p: WorkspacePrincipal,
    ref: string,
    m: EntityManager = this.db.manager,
  ): Promise<{ channel: ChannelRow }> {
    const { channel, member } = await this.find(m, p.workspaceId, ref, p.kind === 'user' ? p.userId : null);
    if (p.kind === 'user' && !member) throw new AppError('NOT_A_MEMBER');
    return { channel };
  }

  /**
   * A message of the caller's workspace for a read (404 `Message` otherwise), with the same rule: a user
   * JWT must be a member of its channel. One round trip.
   */
  async openMessage(
    p: WorkspacePrincipal,
    messageId: string,
    m: EntityManager = this.db.manager,
  ): Promise<{ id: string; channel_id: string; thread_id: string | null }> {
    if (!isUuid(messageId)) throw AppError.notFound('Message');
    const found = await prepared<{
      id: string;
      channel_id: string;
      thread_id: string | null;
      is_member: boolean;
    }>(
      m,
      `SELECT msg.id, msg.channel_id, msg.thread_id,
              EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = msg.channel_id AND cm.user_id = $3::uuid) AS is_member
         FROM messages msg
        WHERE msg.workspace_id = $1 AND msg.id = $2::uuid`,
      [p.workspaceId, messageId, p.kind === 'user' ? p.userId : null],
    );
    const row = found[0];
    if (!row) throw AppError.notFound('Message');
    if (p.kind === 'user' && !row.is_member) throw new AppError('NOT_A_MEMBER');
    return { id: row.id, channel_id: row.channel_id, thread_id: row.thread_id };
  }

  private async find(
    m: EntityManager,
    workspaceId: string,
    ref: string,
    userId: string | null,
  ): Promise<{ channel: ChannelRow; member: boolean }> {
    if (!ref || ref.length > 200) throw AppError.notFound('Channel');
    const found = await prepared<ChannelRow & { is_member: boolean }>(
      m,
      `SELECT ${CHANNEL_COLUMNS},
              EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = $4::uuid) AS is_member
         FROM channels c
        WHERE c.workspace_id = $1 AND (c.id = $2::uuid OR c.external_id = $3)
        ORDER BY (c.id = $2::uuid) DESC NULLS LAST LIMIT 1`,
      [workspaceId, isUuid(ref) ? ref : null, ref, userId],
    );
    const row = found[0];
    if (!row) throw AppError.notFound('Channel');
    const { is_member, ...channel } = row;
    return { channel, member: is_member };
  }
}
