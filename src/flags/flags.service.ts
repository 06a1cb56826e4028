import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { actorRef, ChannelWrites } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { CreateFlagDto } from './dto/flag.dto';
import { FlagsRepository, FlagView, NewFlag } from './flags.repository';

export interface FlagResult {
  flag: FlagView;
  /** False when the reporter had already flagged the target: answer 200 with that flag. */
  created: boolean;
}

/**
 * CONTRACT §19's reports: a user flags a message they can see or a user they share a channel with,
 * once per target. As for other acting routes, a backend key reports on behalf of `user_external_id`.
 * A target the reporter cannot see is 404, as if it did not exist.
 */
@Injectable()
export class FlagsService {
  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly repo: FlagsRepository,
  ) {}

  /** A message of a channel the reporter belongs to; not their own, not a system message, not unsent. */
  async flagMessage(p: WorkspacePrincipal, messageId: string, dto: CreateFlagDto): Promise<FlagResult> {
    const ctx = await this.writes.read(p, null, 'flag', { messageId, userExternalId: dto.user_external_id });
    const head = ctx.message!;
    const reporter = ctx.actor!;
    // not a member, or another user's shadowed message (CONTRACT §19): as if there were no such message
    if (ctx.role === undefined || (head.shadowed && head.user_id !== reporter.id))
      throw AppError.notFound('Message');
    if (head.user_id === reporter.id) throw AppError.validation('id', 'you cannot flag your own message');
    if (head.type === 'system') throw AppError.validation('id', 'a system message cannot be flagged');
    if (head.deleted_at) throw new AppError('MESSAGE_DELETED', 'An unsent message cannot be flagged');
    return this.file({
      workspaceId: p.workspaceId,
      target: { type: 'message', messageId: head.id, authorId: head.user_id },
      byUser: { id: reporter.id, external_id: reporter.external_id, name: reporter.name },
      reason: reasonOf(dto),
    });
  }

  /** A user who shares a channel with the reporter, not the reporter. */
  async flagUser(p: WorkspacePrincipal, externalId: string, dto: CreateFlagDto): Promise<FlagResult> {
    const who = actorRef(p, { kind: 'acting', userExternalId: dto.user_external_id })!;
    const { reporter, target, shared } = await this.repo.reporterAndUser(
      this.db.manager,
      p.workspaceId,
      who,
      externalId,
    );
    if (!target) throw AppError.notFound('User');
    if (!reporter) throw AppError.validation('user_external_id', `unknown user ${dto.user_external_id}`);
    if (target.id === reporter.id) throw AppError.validation('external_id', 'you cannot flag yourself');
    if (!shared) throw AppError.notFound('User');
    return this.file({
      workspaceId: p.workspaceId,
      target: { type: 'user', userId: target.id },
      byUser: reporter,
      reason: reasonOf(dto),
    });
  }

  /** One transaction: the flag, its event and its entry; a repeat writes nothing and answers the earlier flag. */
  private async file(f: NewFlag): Promise<FlagResult> {
    const flag = await this.db.transaction((m) => this.repo.file(m, f));
    if (flag) return { flag, created: true };
    const earlier = await this.repo.findByReporter(this.db.manager, f);
    if (!earlier) throw AppError.notFound(f.target.type === 'message' ? 'Message' : 'User');
    return { flag: earlier, created: false };
  }
}

function reasonOf(dto: CreateFlagDto): string | null {
  return dto.reason?.trim() || null;
}
