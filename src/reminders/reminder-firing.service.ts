import { prepared } from '../infra/database/prepared';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EventLogService } from '../events/event-log.service';
import { DueSource, Scheduler } from '../scheduler/scheduler.service';
import { COLUMNS, ReminderRow, ReminderViews, webhookPayload } from './reminder-views';

/**
 * Fires reminders whose time came (CONTRACT §25), as the scheduler's DueSource: each once, with
 * `notification.reminder_due` to the user's sockets and sync (and the push PushRelay makes of it) and
 * webhook `reminder.due`, written in the transaction that marks it fired.
 */
@Injectable()
export class ReminderFiring implements DueSource, OnModuleInit {
  readonly name = 'reminders';

  constructor(
    private readonly db: DataSource,
    private readonly reminders: ReminderViews,
    private readonly events: EventLogService,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register(this);
  }

  /**
   * The scheduler's pass: up to `limit` reminders whose time came, claimed with SKIP LOCKED and marked
   * fired with their events in one transaction (the `reminders_due` index: one probe when none is due;
   * the bound is statement_timestamp(), stable, so the index range ends there: clock_timestamp(),
   * volatile, would filter every pending entry instead, as bench/scheduler-idle.ts showed).
   */
  async fireDue(limit: number): Promise<number> {
    return this.db.transaction(async (m) => {
      const fired = await prepared<ReminderRow>(
        m,
        `WITH due AS (
           SELECT r.id FROM reminders r WHERE r.remind_at <= statement_timestamp() AND r.fired_at IS NULL
            ORDER BY r.remind_at LIMIT $1 FOR UPDATE SKIP LOCKED),
         f AS (UPDATE reminders r SET fired_at = clock_timestamp(), updated_at = clock_timestamp()
                 FROM due WHERE r.id = due.id RETURNING r.*)
         SELECT ${COLUMNS}, '' AS list_key FROM f r JOIN channels c ON c.id = r.channel_id JOIN users u ON u.id = r.user_id
           JOIN messages msg ON msg.id = r.message_id
          ORDER BY r.remind_at, r.id`,
        [limit],
      );
      const views = new Map((await this.reminders.withMessages(m, fired)).map((v) => [v.id, v]));
      for (const row of fired) {
        const reminder = views.get(row.id);
        // its message went, was unsent, or is by a user its owner blocks since: fired, and nothing said
        if (!reminder) continue;
        await this.events.append(m, {
          workspaceId: row.workspace_id,
          type: 'notification.reminder_due',
          payload: { reminder, message: reminder.message },
          audience: [row.user_id],
        });
        await this.events.append(m, {
          workspaceId: row.workspace_id,
          type: 'reminder.due',
          payload: webhookPayload(row),
        });
      }
      return fired.length;
    });
  }
}
