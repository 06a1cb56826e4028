import { PUSH_JOB } from './push.relay';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DomainEventMap } from '../contract/events';
import { isDeadToken, PushGateway, PushOutcome } from '../infra/push/push-gateway';
import { DevicesRepository } from './devices.repository';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';
import { Metrics } from '../ops/metrics';

type CreatedMessage = DomainEventMap['message.created']['message'];

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
 * messages unsent before the job ran are not pushed. Tokens FCM calls unregistered or invalid are
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
    const rows: { workspace_id: string; type: string; payload: DomainEventMap['message.created'] }[] =
      await this.db.query(`SELECT workspace_id, type, payload FROM events WHERE id = $1`, [job.eventId]);
    const event = rows[0];
    if (!event || event.type !== 'message.created') return;
    const message = event.payload.message;
    // system messages have nobody to name; a shadowed one (CONTRACT §19) is for its author's eyes only
    if (message.type === 'system' || !message.user || message.shadowed) return;
    const live: unknown[] = await this.db.query(
      `SELECT 1 FROM messages WHERE id = $1 AND deleted_at IS NULL`,
      [message.id],
    );
    if (!live.length) return;

    const tokens = await this.devices.recipientTokens(
      event.workspace_id,
      message.channel_id,
      message.user.id,
      (message.mentions ?? []).map((x) => x.user_id),
    );
    if (!tokens.length) return;
    const notification = pushFor(message);
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
        const removed = await this.devices.deleteTokens(event.workspace_id, dead);
        this.logger.log(`removed ${removed} dead push token(s)`);
      }
      const ok = outcomes.filter((o) => o.ok).length;
      const failed = outcomes.filter((o) => !o.ok && !isDeadToken(o));
      this.metrics.push.sent.inc(ok);
      this.metrics.push.failed.inc(failed.length);
      this.metrics.push.invalid_token.inc(dead.length);
      if (failed.length && !ok && sent === 0) {
        throw new Error(
          `push of message ${message.id} failed: ${failed[0]!.errorCode ?? ''} ${failed[0]!.errorMessage ?? ''}`.trim(),
        );
      }
      if (failed.length)
        this.logger.warn(
          `push of message ${message.id}: ${failed.length} of ${batch.length} failed (${failed[0]!.errorCode})`,
        );
      sent += ok;
    }
  }
}
