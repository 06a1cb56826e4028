import { PUSH_JOB } from './push.relay';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DomainEventMap } from '../contract/events';
import { isDeadToken, PushGateway, PushOutcome } from '../infra/push/push-gateway';
import { DevicesRepository } from './devices.repository';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';
import { Metrics } from '../ops/metrics';

type CreatedMessage = DomainEventMap['message.created']['message'];
type PushedEvent =
  | { workspace_id: string; type: 'message.created'; payload: DomainEventMap['message.created'] }
  | {
      workspace_id: string;
      type: 'notification.reminder_due';
      payload: DomainEventMap['notification.reminder_due'];
    }
  | { workspace_id: string; type: 'other'; payload: unknown };

/** The notification of a new message: who sent it and where, never what it says. */
export function pushFor(message: CreatedMessage): { title: string; data: Record<string, string> } {
  const sender = message.user?.name?.trim() || message.user?.external_id || 'Someone';
  return {
    title: `${sender} sent a message`,
    data: { channel_id: message.channel_id, message_id: message.id },
  };
}

/**
 * One `push.message` job: re-reads the event, and sends one multicast per batch of ≤ 500 tokens to the
 * devices of every other member who does not block the sender (nor muted the channel, unless the
 * message mentions them: CONTRACT §18). System messages (no sender), shadowed messages (CONTRACT §19) and
 * messages unsent before the job ran are not pushed. A fired reminder (CONTRACT §25) goes to its user's
 * devices (`reminder`). Tokens FCM calls unregistered or invalid are
 * deleted. When a whole batch fails for another reason (network, credentials, FCM down) and nothing
 * of the message went out yet, the job throws and the queue retries it; later failures are only
 * logged, so a retry never notifies a device twice.
 */
@Injectable()
// multicasts in flight per process
@ProcessesJob(PUSH_JOB, { concurrency: 4 })
export class PushProcessor extends JobProcessor<typeof PUSH_JOB> {
  private readonly logger = new Logger('Push');

  constructor(
    private readonly db: DataSource,
    private readonly devices: DevicesRepository,
    private readonly gateway: PushGateway,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  async handle(job: { eventId: string }): Promise<void> {
    if (!this.gateway.enabled) return;
    const rows: PushedEvent[] = await this.db.query(
      `SELECT workspace_id, type, payload FROM events WHERE id = $1`,
      [job.eventId],
    );
    const event = rows[0];
    if (event?.type === 'message.created') await this.message(event.workspace_id, event.payload);
    if (event?.type === 'notification.reminder_due') await this.reminder(event.workspace_id, event.payload);
  }

  /**
   * A reminder (CONTRACT §25) to its user's devices, muted channel or not: "Reminder", and where, never
   * what the message says. Not when the reminder was deleted or re-timed meanwhile.
   */
  private async reminder(
    workspaceId: string,
    payload: DomainEventMap['notification.reminder_due'],
  ): Promise<void> {
    const { reminder } = payload;
    const [still] = await this.db.query<{ user_id: string }[]>(
      `SELECT user_id FROM reminders WHERE id = $1 AND fired_at IS NOT NULL`,
      [reminder.id],
    );
    if (!still) return;
    const tokens = await this.devices.userTokens(workspaceId, still.user_id);
    await this.deliver(workspaceId, tokens, `reminder ${reminder.id}`, {
      title: 'Reminder',
      data: { channel_id: reminder.channel_id, message_id: reminder.message_id, reminder_id: reminder.id },
    });
  }

  private async message(workspaceId: string, payload: DomainEventMap['message.created']): Promise<void> {
    const message = payload.message;
    // system messages have nobody to name; a shadowed one (CONTRACT §19) is for its author's eyes only
    if (message.type === 'system' || !message.user || message.shadowed) return;
    const live: unknown[] = await this.db.query(
      `SELECT 1 FROM messages WHERE id = $1 AND deleted_at IS NULL`,
      [message.id],
    );
    if (!live.length) return;

    const tokens = await this.devices.recipientTokens(
      workspaceId,
      message.channel_id,
      message.user.id,
      (message.mentions ?? []).map((x) => x.user_id),
    );
    await this.deliver(workspaceId, tokens, `message ${message.id}`, pushFor(message));
  }

  /** One multicast per batch of tokens; throws (for a retry) only while nothing of it went out. */
  private async deliver(
    workspaceId: string,
    tokens: string[],
    what: string,
    notification: { title: string; data: Record<string, string> },
  ): Promise<void> {
    if (!tokens.length) return;
    let sent = 0;
    for (let i = 0; i < tokens.length; i += this.gateway.maxBatch) {
      const batch = tokens.slice(i, i + this.gateway.maxBatch);
      let outcomes: PushOutcome[];
      try {
        outcomes = await this.gateway.send(batch, notification);
      } catch (err) {
        outcomes = batch.map((token) => ({
          token,
          ok: false,
          errorCode: 'send-failed',
          errorMessage: String(err),
        }));
      }
      const dead = outcomes.filter(isDeadToken).map((o) => o.token);
      if (dead.length) {
        const removed = await this.devices.deleteTokens(workspaceId, dead);
        this.logger.log(`removed ${removed} dead push token(s)`);
      }
      const ok = outcomes.filter((o) => o.ok).length;
      const failed = outcomes.filter((o) => !o.ok && !isDeadToken(o));
      this.metrics.push.sent.inc(ok);
      this.metrics.push.failed.inc(failed.length);
      this.metrics.push.invalid_token.inc(dead.length);
      if (failed.length && !ok && sent === 0) {
        throw new Error(
          `push of ${what} failed: ${failed[0]!.errorCode ?? ''} ${failed[0]!.errorMessage ?? ''}`.trim(),
        );
      }
      if (failed.length)
        this.logger.warn(
          `push of ${what}: ${failed.length} of ${batch.length} failed (${failed[0]!.errorCode})`,
        );
      sent += ok;
    }
  }
}
