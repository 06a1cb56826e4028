import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelWrites } from '../channels/writes';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { MessageUnsend } from '../messages/message-unsend';
import { ErasureRepository, ErasureRow, MessageBatch } from './erasure.repository';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';

export const ERASE_JOB = 'user.erase' as const;

/**
 * Carries out an erasure (CONTRACT §20) after its request made the user an anonymous placeholder: one
 * transaction per batch of at most SERVICE_ERASURE_BATCH_SIZE messages of one channel, newest first,
 * so neither a transaction nor a channel's write lock is held for longer than one batch's SQL however
 * many messages the user wrote; then their reactions, the mentions of them and their uploads' uploader
 * in batches; then the placeholder row goes.
 *
 * Per batch, by mode:
 * - `keep`: the messages' `user_id` goes null (`user: null`). Nothing is announced (as a deleted user's
 *   messages never were) and no channel lock is taken: there is no event to order.
 * - `anonymize`: under the channel's lock, MessageUnsend.unsend, the unsend of DELETE /v1/messages/:id:
 *   blanked, unpinned, thread counters, `message.deleted` (+ `message.unpinned`, `thread.updated`), and
 *   `user_id` null in the same write.
 * - `delete`: under the channel's lock, MessageUnsend.remove: the rows go with their reactions, mentions
 *   and pins, `message.deleted` with `removed: true` for each; a thread root with other people's replies
 *   is blanked instead, so their replies stay readable.
 * In every mode the user leaves the participants of the threads the batch replied in.
 *
 * Resumable and idempotent: each batch commits its changes, its events and the walk's cursor together,
 * and re-reads under the locks which of its messages are still the user's; a crash, a retry or a second
 * runner of the same erasure continues from the last committed batch, and a message already blanked
 * fires nothing again.
 */
@Injectable()
// each erasure is a stream of write transactions: one keeps a core busy
@ProcessesJob(ERASE_JOB, { concurrency: 1 })
export class ErasureProcessor extends JobProcessor<typeof ERASE_JOB> {
  private readonly logger = new Logger('Erasure');
  private stopping = false;

  constructor(
    private readonly db: DataSource,
    private readonly repo: ErasureRepository,
    private readonly writes: ChannelWrites,
    private readonly unsends: MessageUnsend,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  /** Lets the job in progress stop at its next batch (shutdown); the erasure stays pending and resumes. */
  stop(): void {
    this.stopping = true;
  }

  async handle(job: { erasureId: string }): Promise<void> {
    const e = await this.repo.get(job.erasureId);
    if (!e || e.status === 'done') return;
    try {
      await this.run(e);
    } catch (err) {
      await this.repo.failed(e.id, err instanceof Error ? err.message : String(err)).catch(() => undefined);
      throw err;
    }
  }

  private async run(e: ErasureRow): Promise<void> {
    const size = this.config.SERVICE_ERASURE_BATCH_SIZE;
    let cursor = e.cursor_channel && e.cursor_at ? { channelId: e.cursor_channel, at: e.cursor_at } : null;
    // One walk is enough: no message of the user can appear behind it. The request removed their
    // memberships under each channel's lock (a send in flight re-checks membership under that lock, so
    // it committed before, and is walked, or is refused) and their external id (nobody can name them).
    for (;;) {
      this.checkStopping();
      const batch = await this.repo.nextBatch(e.user_id, cursor, size);
      if (!batch) break;
      await this.messages(e, batch);
      cursor = { channelId: batch.channelId, at: batch.cursorAt };
    }
    for (const step of [
      () => this.repo.deleteReactions(e.user_id, size),
      () => this.repo.deleteMentions(e.user_id, size),
      () => this.repo.forgetUploads(e.user_id, size),
    ]) {
      while ((await step()) > 0) this.checkStopping();
    }
    await this.repo.finish(e.id, e.user_id);
    this.logger.log(`erasure ${e.id} (${e.mode}) done`);
  }

  /** One batch: one channel's messages, one transaction. */
  private async messages(e: ErasureRow, batch: MessageBatch): Promise<void> {
    await this.db.transaction(async (m) => {
      // the channel's order lock first (before any row lock: ChannelWrites' rule), only when there are events
      const [s] = e.mode === 'keep' ? [] : await this.writes.lock(m, e.workspace_id, [batch.channelId]);
      const ids = await this.repo.lockMine(m, e.user_id, batch.ids, e.mode === 'delete');
      if (ids.length) {
        await this.repo.leaveThreads(m, e.user_id, ids);
        if (s && e.mode === 'anonymize') await this.unsends.unsend(s, ids, { forgetAuthor: true });
        if (s && e.mode === 'delete') await this.unsends.remove(s, ids);
        // keep, and whatever anonymize or delete left: unsent before, a root kept for its replies
        await this.repo.forgetAuthor(m, e.user_id, ids);
      }
      await this.repo.advance(m, e.id, ids.length, { channelId: batch.channelId, at: batch.cursorAt });
    });
  }

  private checkStopping(): void {
    if (this.stopping) throw new Error('stopping: the erasure resumes from its last batch');
  }
}
