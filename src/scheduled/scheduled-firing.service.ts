import { prepared } from '../infra/database/prepared';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError, httpStatusOf } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { EventLogService } from '../events/event-log.service';
import { exactTime, rows } from '../infra/database/sql';
import { mentionsAsExternalIds } from '../drafts/drafts.service';
import { SendMessageDto } from '../messages/dto/send-message.dto';
import type { ScheduledSend } from '../messages/message-scheduling';
import { MessagesService, SendResult } from '../messages/messages.service';
import { DueSource, Scheduler } from '../scheduler/scheduler.service';

/**
 * How long a worker holds the scheduled messages it claimed. Their sends run outside the claim's
 * transaction (a send may wait for the pre-send hook), so the claim is a lease: one that runs out (its
 * worker died) is claimed again, and a send deletes its row only while its own claim holds.
 */
const CLAIM_SECONDS = 60;
/** Sends in flight at once per pass (a hooked send may wait up to 5 s for its hook). */
const IN_FLIGHT = 8;
/** Firings that ended in an unexpected error before it is marked failed. */
const MAX_ATTEMPTS = 5;

interface DueRow {
  id: string;
  workspace_id: string;
  channel_id: string;
  user_id: string;
  external_id: string;
  by_user: boolean;
  run_hooks: boolean;
  skip_previews: boolean;
  idempotency_key: string | null;
  attempts: number;
  content: string;
  attachment_url: string | null;
  parent_id: string | null;
  thread_id: string | null;
  show_in_channel: boolean;
  mentions: string[];
  metadata: Record<string, unknown>;
}

/** The scheduled message's row was changed or cancelled since it was claimed: its send rolls back. */
class TakenBack extends Error {}

/**
 * Sends scheduled messages whose time came (CONTRACT §25), as the scheduler's DueSource. Each is sent
 * by MessagesService as its author's send, checked then in §7's order (the rate limit and slow mode
 * aside); the send's transaction deletes the scheduled message and writes `scheduled.sent` to its
 * author, so it is sent once. A refusal leaves it listed as failed with the error, and
 * `scheduled.failed` to its author. Anything else (the database gone) leaves it claimed: it is sent
 * when the claim runs out.
 */
@Injectable()
export class ScheduledFiring implements DueSource, OnModuleInit {
  readonly name = 'scheduled messages';
  private readonly logger = new Logger('ScheduledFiring');

  constructor(
    private readonly db: DataSource,
    private readonly messages: MessagesService,
    private readonly events: EventLogService,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register(this);
  }

  /**
   * Claims up to `limit` pending scheduled messages whose time came (the `scheduled_messages_due` index,
   * bounded by statement_timestamp() as the reminders' claim is), then sends them one by one, oldest first.
   */
  async fireDue(limit: number): Promise<number> {
    const claim = newId();
    const due = await prepared<DueRow & { scheduled_key: string }>(
      this.db.manager,
      `WITH due AS (
         SELECT s.id FROM scheduled_messages s
          WHERE s.status = 'pending' AND s.scheduled_at <= statement_timestamp()
            AND (s.claimed_until IS NULL OR s.claimed_until < statement_timestamp())
          ORDER BY s.scheduled_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       UPDATE scheduled_messages s
          SET claim = $2, claimed_until = statement_timestamp() + make_interval(secs => ${CLAIM_SECONDS}),
              attempts = s.attempts + 1
         FROM due, users u
        WHERE s.id = due.id AND u.id = s.user_id
       RETURNING s.id, s.workspace_id, s.channel_id, s.user_id, u.external_id, s.by_user, s.run_hooks, s.skip_previews,
                 s.idempotency_key, s.attempts, s.content, s.attachment_url, s.parent_id, s.thread_id,
                 s.show_in_channel, ${mentionsAsExternalIds('s.mention_ids')} AS mentions, s.metadata,
                 ${exactTime('s.scheduled_at')} AS scheduled_key`,
      [limit, claim],
    );
    due.sort((a, b) => a.scheduled_key.localeCompare(b.scheduled_key) || a.id.localeCompare(b.id));
    // oldest first, a few at a time: a slow hook holds up only its own send
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const row = due[next++]!;
        await this.fire(row, claim).catch((e: unknown) =>
          this.logger.warn(`scheduled message ${row.id}: ${String(e)}; tried again in ${CLAIM_SECONDS} s`),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, due.length) }, worker));
    return due.length;
  }

  private async fire(row: DueRow, claim: string): Promise<void> {
    if (row.attempts > MAX_ATTEMPTS)
      return this.failed(
        row,
        claim,
        new AppError('INTERNAL', `Could not be sent in ${MAX_ATTEMPTS} attempts`),
      );
    const p: WorkspacePrincipal = row.by_user
      ? { kind: 'user', workspaceId: row.workspace_id, userId: row.user_id, externalId: row.external_id }
      : { kind: 'backend', workspaceId: row.workspace_id, apiKey: '' };
    const dto = Object.assign(new SendMessageDto(), {
      content: row.content,
      attachment_url: row.attachment_url ?? undefined,
      parent_id: row.parent_id ?? undefined,
      thread_id: row.thread_id ?? undefined,
      show_in_channel: row.thread_id ? row.show_in_channel : undefined,
      mentions: row.mentions.length ? row.mentions : undefined,
      metadata: Object.keys(row.metadata).length ? row.metadata : undefined,
      idempotency_key: row.idempotency_key ?? undefined,
      run_hooks: row.run_hooks || undefined,
      skip_previews: row.skip_previews || undefined,
      user_external_id: row.by_user ? undefined : row.external_id,
    } satisfies SendMessageDto);
    const steps: ScheduledSend = {
      take: async (m) => {
        const taken = await rows<{ id: string }>(
          m,
          `DELETE FROM scheduled_messages WHERE id = $1 AND claim = $2 RETURNING id`,
          [row.id, claim],
        );
        if (!taken.length) throw new TakenBack();
      },
      sent: async (m, message) => {
        await this.events.append(m, {
          workspaceId: row.workspace_id,
          type: 'scheduled.sent',
          payload: { scheduled_message_id: row.id, message },
          audience: [row.user_id],
        });
      },
    };
    let result: SendResult;
    try {
      result = await this.messages.send(p, row.channel_id, dto, { transport: 'scheduler', scheduled: steps });
    } catch (e) {
      if (e instanceof TakenBack) return; // changed or cancelled meanwhile: a changed one fires again
      if (e instanceof AppError && httpStatusOf(e.code) < 500) return this.failed(row, claim, e);
      throw e; // left claimed: tried again when the claim runs out
    }
    // its idempotency key named a message already (a send with the same key): that one is its message
    if (result.replayed)
      await this.db
        .transaction(async (m) => {
          await steps.take(m);
          await steps.sent(m, result.message);
        })
        .catch((e: unknown) => {
          if (!(e instanceof TakenBack)) throw e;
        });
  }

  /** Refused: listed as failed with the error (unless changed or cancelled meanwhile), `scheduled.failed` to its author. */
  private async failed(row: DueRow, claim: string, e: AppError): Promise<void> {
    const error = { code: e.code, message: e.message };
    await this.db.transaction(async (m) => {
      const marked = await rows<{ id: string }>(
        m,
        `UPDATE scheduled_messages SET status = 'failed', error = $3::jsonb, claim = NULL, claimed_until = NULL,
                updated_at = clock_timestamp()
          WHERE id = $1 AND claim = $2 RETURNING id`,
        [row.id, claim, JSON.stringify(error)],
      );
      if (!marked.length) return;
      await this.events.append(m, {
        workspaceId: row.workspace_id,
        type: 'scheduled.failed',
        payload: { scheduled_message_id: row.id, error },
        audience: [row.user_id],
      });
    });
  }
}
