import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { createdPayload, freshView, PENDING_TIME } from '../messages/message-view.service';
import { WorkspaceSettingsCache } from '../workspaces/workspace-settings.cache';
import { ChannelMembersRepository } from './channel-members.repository';
import { ChannelWriteSession, ChannelWrites, OutgoingEvent, PENDING_MESSAGE_ID } from './writes';

/** Someone named in a membership notice. */
export interface NoticeUser {
  name: string | null;
  external_id: string;
}

/** At most this many names in one notice; the rest are counted ("and 3 others"). */
const NOTICE_MAX_NAMES = 10;

/**
 * What every membership change has to do besides the row itself, shared by the channel routes and
 * by user deletion: the last-admin rule and CONTRACT §6's optional system messages ("Ana added Bo").
 * Everything runs in the caller's ChannelWriteSession.
 */
@Injectable()
export class ChannelMembership {
  constructor(
    private readonly members: ChannelMembersRepository,
    private readonly writes: ChannelWrites,
    private readonly settings: WorkspaceSettingsCache,
  ) {}

  /**
   * The workspace setting `system_messages_for_membership` (default false), from the settings cache; a
   * miss reads through the caller's transaction (the embedded database has one connection: a read beside
   * it would wait forever).
   */
  async noticesEnabled(m: EntityManager, workspaceId: string): Promise<boolean> {
    return (await this.settings.get(workspaceId, m)).system_messages_for_membership;
  }

  /** "Ana added Bo and Cy" (a user acting) or "Bo and Cy joined" (a backend key). */
  addedNotice(actor: NoticeUser | null, added: NoticeUser[]): string {
    return actor ? `${nameOf(actor)} added ${names(added)}` : `${names(added)} joined`;
  }

  /** "Bo left" (leaving, or a deleted user), "Ana removed Bo" (an admin), "Bo was removed" (a backend key). */
  removedNotice(actor: NoticeUser | null, removed: NoticeUser[], self: boolean): string {
    if (self) return `${names(removed)} left`;
    if (actor) return `${nameOf(actor)} removed ${names(removed)}`;
    return `${names(removed)} ${removed.length === 1 ? 'was' : 'were'} removed`;
  }

  /** Posts a system message into the channel and logs its `message.created`, like POST /v1/messages with system: true. */
  async postNotice(s: ChannelWriteSession, content: string): Promise<void> {
    const sent = await s.sendMessage(
      {
        id: null,
        keepDraft: false,
        userId: null,
        senderKey: 'system',
        type: 'system',
        content,
        attachmentUrl: null,
        attachment: null,
        parentId: null,
        idempotencyKey: null,
        mentionIds: [],
        threadId: null,
        showInChannel: false,
        metadata: null,
        byUser: false,
        shadowed: false,
      },
      [
        {
          type: 'message.created',
          payload: createdPayload(
            freshView({
              id: PENDING_MESSAGE_ID,
              channel: s.channel,
              user: null,
              content,
              type: 'system',
              attachment_url: null,
              attachment: null,
              parent_id: null,
              quoted_message: null,
              mentions: [],
              thread_id: null,
              show_in_channel: false,
              metadata: {},
              created_at: PENDING_TIME,
            }),
          ),
        } satisfies OutgoingEvent<'message.created'>,
      ],
    );
    if (sent.outcome !== 'sent') throw new Error(`a system message could not be posted: ${sent.outcome}`);
  }

  /** `member.joined` / `member.left` for these users, each addressed to them too (their sync shows it). */
  async memberChanged(
    s: ChannelWriteSession,
    type: 'member.joined' | 'member.left',
    users: { id: string; external_id: string }[],
  ): Promise<void> {
    await s.appendMemberEvents(
      type,
      users.map((user) => ({
        channel_id: s.channel.id,
        channel_external_id: s.channel.external_id,
        user_id: user.id,
        external_id: user.external_id,
      })),
    );
  }

  /** After someone leaves: a group that still has members but no admin gets its earliest-joined member promoted. */
  async ensureAnAdmin(s: ChannelWriteSession): Promise<void> {
    if (s.channel.type !== 'group') return;
    const members = await this.members.members(s.m, [s.channel.id]);
    if (!members.length || members.some((x) => x.role === 'admin')) return;
    const next = members[0]!; // ordered by joined_at
    await this.members.setRole(s.m, s.channel.id, next.user_id, 'admin');
    await s.appendMemberEvents('member.role_changed', [
      {
        channel_id: s.channel.id,
        channel_external_id: s.channel.external_id,
        user_id: next.user_id,
        external_id: next.external_id,
        role: 'admin',
      },
    ]);
  }

  /**
   * A user is being deleted (CONTRACT §5: their memberships go with them): leaves every channel the
   * way a self-leave does, so groups they administered get a new admin, members hear `member.left`
   * and, when the setting is on, groups get "Bo left". Channels are locked in id order, so two
   * deletions never deadlock each other; every other writer locks one channel at a time.
   */
  async leaveAll(m: EntityManager, workspaceId: string, user: { id: string } & NoticeUser): Promise<void> {
    const sessions = await this.writes.lock(
      m,
      workspaceId,
      await this.members.channelIdsOf(m, workspaceId, user.id),
    );
    if (!sessions.length) return;
    const notices =
      sessions.some((s) => s.channel.type === 'group') && (await this.noticesEnabled(m, workspaceId));
    for (const s of sessions) {
      const removed = await this.members.remove(m, s.channel.id, [user.id]);
      if (!removed.length) continue;
      await this.memberChanged(s, 'member.left', [user]);
      if (notices && s.channel.type === 'group')
        await this.postNotice(s, this.removedNotice(null, [user], true));
      await this.ensureAnAdmin(s);
    }
  }
}

function nameOf(u: NoticeUser): string {
  return u.name?.trim() || u.external_id;
}

/** "Bo", "Bo and Cy", "Bo, Cy and Di", "Bo, Cy, … and 5 others". */
function names(users: NoticeUser[]): string {
  const shown = users.slice(0, NOTICE_MAX_NAMES).map(nameOf);
  const rest = users.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} ${rest === 1 ? 'other' : 'others'}`;
  if (shown.length === 1) return shown[0]!;
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
