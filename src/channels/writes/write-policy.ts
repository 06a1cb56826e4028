import { AppError } from '../../common/errors/app-error';
import type { MemberRole } from '../channel-members.repository';
import type { ChannelRow } from '../channels.repository';

/**
 * What a kind of channel write requires, declared once. `enforce` reads it; nothing else decides a
 * channel policy error (docs/ARCHITECTURE.md has the table of rules and their owners).
 */
export interface WritePolicy {
  /**
   * Who the write is done as (CONTRACT §3): `acting`, a user must act (the JWT's, or the user a backend
   * key names in `user_external_id`, required then); `caller`, the JWT's user, or nobody for a backend
   * key, which passes every rule.
   */
  actor: 'acting' | 'caller';
  /**
   * What the actor must be: a `member` (403 NOT_A_MEMBER); `manage`, besides, an admin of a group
   * (either member of a direct channel); `group_admin`, an admin of a group, never a user in a direct
   * channel (403 FORBIDDEN for both).
   */
  need: 'member' | 'manage' | 'group_admin';
  /** The message of the FORBIDDEN a user gets in a direct channel (`group_admin`). */
  direct?: string;
  /** The message of the MESSAGE_DELETED an unsent message gets (`live`). */
  unsent?: string;
  /** An idempotent replay answers the original right after the membership rule (CONTRACT §7's order). */
  replay?: true;
  /** A user JWT's act is refused in a frozen channel: 403 CHANNEL_FROZEN (CONTRACT §17). */
  frozen?: true;
  /** A user JWT acts only on their own message: 403 NOT_AUTHOR. */
  author?: true;
  /** A banned actor is refused, whoever acts for them: 403 BANNED (CONTRACT §19; a shadow ban refuses nothing). */
  banned?: true;
  /** A muted actor is refused: 403 MUTED (CONTRACT §5). */
  muted?: true;
  /** The message must not be unsent: 422 MESSAGE_DELETED. */
  live?: true;
  /** A user JWT acts within the configured window of the message's age: 422 EDIT_ / UNSEND_WINDOW_EXPIRED. */
  window?: 'edit' | 'unsend';
}

/**
 * Every kind of channel write and its policy. Slow mode (a user's send within `slow_mode_seconds` of
 * their previous one, admins exempt) has one owner too: chat_send_message, under the channel's lock,
 * where the previous send's instant is.
 */
export const WRITE_POLICIES = {
  /** A user's message, or a backend's for `user_external_id`. */
  send: { actor: 'acting', need: 'member', replay: true, frozen: true, banned: true, muted: true },
  /** A backend's system message: no sender, so no rule but the channel's existence. */
  send_system: { actor: 'caller', need: 'member', replay: true },
  edit: {
    actor: 'caller',
    need: 'member',
    frozen: true,
    author: true,
    banned: true,
    live: true,
    window: 'edit',
  },
  /** An unsent message is answered as it is (no window then); a banned user may still unsend. */
  unsend: { actor: 'caller', need: 'member', frozen: true, author: true, window: 'unsend' },
  react: { actor: 'acting', need: 'member', frozen: true, banned: true, live: true },
  unreact: { actor: 'acting', need: 'member', frozen: true, banned: true },
  /** CONTRACT §28: a vote, or its withdrawal, as for reactions. */
  vote: {
    actor: 'acting',
    need: 'member',
    frozen: true,
    banned: true,
    live: true,
    unsent: 'An unsent poll takes no votes',
  },
  /** Its creator, a group admin or the backend (PollsService decides among members). */
  close_poll: { actor: 'caller', need: 'member', live: true, unsent: 'The poll was unsent' },
  /** Who voted (PollsService refuses an anonymous poll). */
  list_votes: { actor: 'caller', need: 'member', live: true, unsent: 'The poll was unsent' },
  pin: { actor: 'caller', need: 'manage', live: true, unsent: 'An unsent message cannot be pinned' },
  unpin: { actor: 'caller', need: 'manage' },
  mark_read: { actor: 'acting', need: 'member' },
  mark_delivered: { actor: 'acting', need: 'member' },
  set_user_state: { actor: 'caller', need: 'member' },
  update_channel: { actor: 'caller', need: 'manage' },
  /** A direct channel's name, avatar and controls are the backend's. */
  update_direct_channel: {
    actor: 'caller',
    need: 'group_admin',
    direct: 'Only the backend can change a direct channel',
  },
  delete_channel: { actor: 'caller', need: 'manage' },
  add_members: { actor: 'caller', need: 'manage' },
  remove_members: { actor: 'caller', need: 'manage' },
  /** A user removing only themselves. */
  leave: { actor: 'caller', need: 'member' },
  set_role: { actor: 'caller', need: 'manage' },
  /** Channel bans: the backend, or an admin of a group (in a direct channel there is nobody to moderate for). */
  ban_in_channel: { actor: 'caller', need: 'group_admin', direct: 'Bans are set in groups' },
  /**
   * A flag reads the write context for its visibility rule (FlagsService answers 404 for a message the
   * reporter cannot see); it is not enforced.
   */
  flag: { actor: 'acting', need: 'member' },
} as const satisfies Record<string, WritePolicy>;

export type ChannelWriteKind = keyof typeof WRITE_POLICIES;

/**
 * The facts the rules decide on, read before the write. Under the channel's lock, `write()` reads again
 * those that can change the outcome of the write's own rows (the channel, the actor's membership and
 * role, the message's state); the ban, the mute and the authorship are the ones read before.
 */
export interface WriteFacts {
  principal: 'user' | 'backend';
  /** The acting user; null for a backend key acting as itself. */
  actorId: string | null;
  channel: Pick<ChannelRow, 'type' | 'frozen'>;
  /** The actor's role (null in direct channels); undefined when the actor is not a member. */
  role: MemberRole | null | undefined;
  ban: 'ban' | 'shadow' | null;
  muted: boolean;
  /** The send's idempotency key already names a message. */
  replay: boolean;
  /** The message a message-targeted write is about. */
  message: { user_id: string | null; deleted_at: Date | null; age_seconds: number } | null;
}

/** The configured windows (SERVICE_EDIT_WINDOW_SECONDS, SERVICE_UNSEND_WINDOW_SECONDS; unset = unlimited). */
export interface WriteWindows {
  edit?: number;
  unsend?: number;
}

/**
 * Decides every channel policy error of a write, in CONTRACT §7's order: membership and role, the
 * idempotent replay, frozen, authorship, ban, mute, the unsent message, the window. Throws the error;
 * answers `replay` when the send's key named an earlier message (checks after it do not apply) and
 * `go` otherwise. Pure: the same function decides before the write and under the lock.
 */
export function enforce(policy: WritePolicy, f: WriteFacts, windows: WriteWindows): 'go' | 'replay' {
  const user = f.principal === 'user';
  if (f.actorId !== null) {
    if (f.role === undefined) throw new AppError('NOT_A_MEMBER');
    if (policy.need !== 'member' && f.channel.type === 'group' && f.role !== 'admin')
      throw new AppError('FORBIDDEN', 'Only a channel admin can do this');
    if (policy.need === 'group_admin' && f.channel.type !== 'group')
      throw new AppError('FORBIDDEN', policy.direct ?? 'Only the backend can do this in a direct channel');
  }
  if (policy.replay && f.replay) return 'replay';
  if (policy.frozen && user && f.channel.frozen) throw new AppError('CHANNEL_FROZEN');
  if (policy.author && user && f.message && f.message.user_id !== f.actorId) throw new AppError('NOT_AUTHOR');
  if (policy.banned && f.actorId !== null && f.ban === 'ban') throw new AppError('BANNED');
  if (policy.muted && f.actorId !== null && f.muted) throw new AppError('MUTED');
  if (f.message?.deleted_at) {
    if (policy.live) throw new AppError('MESSAGE_DELETED', policy.unsent);
    return 'go';
  }
  if (policy.window && user && f.message) {
    const limit = windows[policy.window];
    if (limit !== undefined && f.message.age_seconds > limit)
      throw new AppError(policy.window === 'edit' ? 'EDIT_WINDOW_EXPIRED' : 'UNSEND_WINDOW_EXPIRED');
  }
  return 'go';
}
