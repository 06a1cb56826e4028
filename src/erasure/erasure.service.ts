import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelMembership } from '../channels/channel-membership';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { iso, isoNotNull } from '../common/time';
import { QueueService } from '../infra/queue/queue.module';
import { WorkspaceChanges } from '../workspaces/workspace-changes';
import type { ErasureDto } from './dto/erasure.dto';
import { ERASE_JOB, ErasureProcessor } from './erasure.processor';
import { ErasureMode, ErasureRepository } from './erasure.repository';

/** CONTRACT §20: up to this many messages the request erases them itself (204); beyond, a job does (202). */
export const INLINE_MAX_MESSAGES = 1_000;

/**
 * `DELETE /v1/users/:external_id?messages=…` (CONTRACT §20, and §5's deletion as `keep`). In one
 * transaction the user leaves their channels the way a self-leave does (last-admin rule, `member.left`,
 * "Bo left" notices), their devices, blocks, mute and bans go, and their row becomes an anonymous
 * placeholder (no external id, name, avatar or metadata): from that commit on the user is gone for the
 * API (404, tokens refused, sockets closed on every instance), the external id can be created again as
 * a new user, and their messages show `user: null`. The messages themselves, their reactions and the
 * mentions of them follow in batches (ErasureProcessor): within the request for up to 1,000 messages,
 * else in the `user.erase` job, whose id the request answers with.
 */
@Injectable()
export class ErasureService {
  private readonly logger = new Logger('Erasure');

  constructor(
    private readonly db: DataSource,
    private readonly repo: ErasureRepository,
    private readonly membership: ChannelMembership,
    private readonly processor: ErasureProcessor,
    private readonly queue: QueueService,
    private readonly changes: WorkspaceChanges,
  ) {}

  /** Answers the job id when a job finishes the erasure, null when it is done already. */
  async erase(workspaceId: string, externalId: string, mode: ErasureMode): Promise<{ jobId: string | null }> {
    const { erasureId, userId, messages } = await this.db.transaction(async (m) => {
      const user = await this.repo.findUser(m, workspaceId, externalId);
      if (!user) throw AppError.notFound('User');
      await this.membership.leaveAll(m, workspaceId, user);
      // a concurrent erasure of the same user got there first: this one rolls back (404, as after it)
      if (!(await this.repo.detach(m, workspaceId, user.id))) throw AppError.notFound('User');
      return {
        erasureId: await this.repo.create(m, workspaceId, user.id, mode),
        userId: user.id,
        messages: await this.repo.countMessages(m, user.id, INLINE_MAX_MESSAGES),
      };
    });
    // the user's tokens stop working and their sockets close, on every instance
    this.changes.changed(workspaceId, 'users', userId);
    if (messages <= INLINE_MAX_MESSAGES) {
      try {
        await this.processor.handle({ erasureId });
        return { jobId: null };
      } catch (err) {
        // the user is gone already; the job finishes what the request could not
        this.logger.warn(`erasure ${erasureId} continues as a job: ${String(err)}`);
      }
    }
    await this.enqueue(erasureId);
    return { jobId: erasureId };
  }

  async get(workspaceId: string, id: string): Promise<ErasureDto> {
    const e = isUuid(id) ? await this.repo.find(workspaceId, id) : null;
    if (!e) throw AppError.notFound('Erasure');
    return {
      id: e.id,
      status: e.status,
      messages: e.mode,
      messages_done: Number(e.messages_done),
      created_at: isoNotNull(e.created_at),
      finished_at: iso(e.finished_at),
    };
  }

  /** Puts the erasure on the queue (its id is the job id); if the queue refuses, the sweeper will. */
  async enqueue(erasureId: string, revive = false): Promise<void> {
    try {
      await this.queue.add(ERASE_JOB, { erasureId }, { jobId: erasureId, revive });
    } catch (err) {
      this.logger.warn(`could not enqueue erasure ${erasureId}, the sweeper will: ${String(err)}`);
    }
  }
}
