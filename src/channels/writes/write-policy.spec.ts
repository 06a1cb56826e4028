import { AppError } from '../../common/errors/app-error';
import { enforce, WRITE_POLICIES, WriteFacts } from './write-policy';

/** The order of the rules when several apply (each rule's effect per write kind is in test/channels/write-rules). */
describe('enforce', () => {
  const facts = (over: Partial<WriteFacts> = {}): WriteFacts => ({
    principal: 'user',
    actorId: 'u1',
    channel: { type: 'group', frozen: false },
    role: 'member',
    ban: null,
    muted: false,
    replay: false,
    message: null,
    ...over,
  });
  const codeOf = (f: () => unknown): string | null => {
    try {
      f();
      return null;
    } catch (e) {
      return (e as AppError).code;
    }
  };

  it('decides a send in CONTRACT §7 order: membership, then the replay, then frozen, ban and mute', () => {
    const all = {
      role: undefined,
      replay: true,
      channel: { type: 'group' as const, frozen: true },
      ban: 'ban' as const,
      muted: true,
    };
    expect(codeOf(() => enforce(WRITE_POLICIES.send, facts(all), {}))).toBe('NOT_A_MEMBER');
    expect(enforce(WRITE_POLICIES.send, facts({ ...all, role: 'member' }), {})).toBe('replay');
    expect(
      codeOf(() => enforce(WRITE_POLICIES.send, facts({ ...all, role: 'member', replay: false }), {})),
    ).toBe('CHANNEL_FROZEN');
    const thawed = {
      ...all,
      role: 'member' as const,
      replay: false,
      channel: { type: 'group' as const, frozen: false },
    };
    expect(codeOf(() => enforce(WRITE_POLICIES.send, facts(thawed), {}))).toBe('BANNED');
    expect(codeOf(() => enforce(WRITE_POLICIES.send, facts({ ...thawed, ban: 'shadow' }), {}))).toBe('MUTED');
    expect(enforce(WRITE_POLICIES.send, facts({ ...thawed, ban: 'shadow', muted: false }), {})).toBe('go');
  });

  it('passes a backend key acting as itself through every rule about the actor, and a backend acting for a user through frozen only', () => {
    const hard = facts({
      principal: 'backend',
      actorId: null,
      role: undefined,
      channel: { type: 'group', frozen: true },
      ban: 'ban',
      muted: true,
    });
    for (const policy of Object.values(WRITE_POLICIES)) expect(enforce(policy, hard, {})).toBe('go');
    // the message's state is not about the actor: an unsent message is refused to the backend too
    const unsent = { ...hard, message: { user_id: 'u2', deleted_at: new Date(), age_seconds: 1e6 } };
    expect(codeOf(() => enforce(WRITE_POLICIES.edit, unsent, { edit: 1 }))).toBe('MESSAGE_DELETED');
    expect(enforce(WRITE_POLICIES.unsend, unsent, { unsend: 1 })).toBe('go');
    const forUser = facts({ principal: 'backend', channel: { type: 'group', frozen: true } });
    expect(enforce(WRITE_POLICIES.send, forUser, {})).toBe('go');
    expect(codeOf(() => enforce(WRITE_POLICIES.send, { ...forUser, muted: true }, {}))).toBe('MUTED');
  });

  it('answers an unsent message on unsend whatever its age, and refuses it on edit before the window', () => {
    const old = { user_id: 'u1', deleted_at: new Date(), age_seconds: 100 };
    expect(enforce(WRITE_POLICIES.unsend, facts({ message: old }), { unsend: 10 })).toBe('go');
    expect(codeOf(() => enforce(WRITE_POLICIES.edit, facts({ message: old }), { edit: 10 }))).toBe(
      'MESSAGE_DELETED',
    );
    const live = { ...old, deleted_at: null };
    expect(codeOf(() => enforce(WRITE_POLICIES.unsend, facts({ message: live }), { unsend: 10 }))).toBe(
      'UNSEND_WINDOW_EXPIRED',
    );
    expect(enforce(WRITE_POLICIES.unsend, facts({ message: live }), {})).toBe('go');
    expect(
      codeOf(() => enforce(WRITE_POLICIES.unsend, facts({ message: { ...live, user_id: 'u2' } }), {})),
    ).toBe('NOT_AUTHOR');
  });

  it('lets either member of a direct channel manage it, and only the backend do what is for group admins', () => {
    const direct = facts({ channel: { type: 'direct', frozen: false }, role: null });
    expect(enforce(WRITE_POLICIES.pin, direct, {})).toBe('go');
    expect(codeOf(() => enforce(WRITE_POLICIES.ban_in_channel, direct, {}))).toBe('FORBIDDEN');
    expect(codeOf(() => enforce(WRITE_POLICIES.pin, facts(), {}))).toBe('FORBIDDEN');
    expect(enforce(WRITE_POLICIES.ban_in_channel, facts({ role: 'admin' }), {})).toBe('go');
  });
});
