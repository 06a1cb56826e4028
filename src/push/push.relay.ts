import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EventJobRelay } from '../events/event-job-relay';
import { LogTail } from '../events/log-tail';
import { Leadership } from '../infra/database/leadership';
import { QueueService } from '../infra/queue/queue.module';
import { Metrics } from '../ops/metrics';

export const PUSH_JOB = 'push.message' as const;
/** A push about a message older than this is noise: such events are passed over (after an outage, say). */
export const PUSH_MAX_AGE_SECONDS = 15 * 60;

/**
 * Turns committed `message.created` (to the channel's members) and `notification.reminder_due` (to its
 * user) events into push jobs: an EventJobRelay (one leader, a saved cursor, at least once, the job id
 * the event id).
 */
@Injectable()
export class PushRelay extends EventJobRelay {
  constructor(db: DataSource, queue: QueueService, tail: LogTail, leadership: Leadership, metrics: Metrics) {
    super(db, queue, tail, leadership, metrics, {
      name: 'push',
      job: PUSH_JOB,
      types: ['message.created', 'notification.reminder_due'],
      maxAgeSeconds: PUSH_MAX_AGE_SECONDS,
    });
  }
}
