import { prepared } from '../infra/database/prepared';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelWrites } from '../channels/writes';
import { DueSource, Scheduler } from '../scheduler/scheduler.service';
import { PollsService } from './polls.service';

/**
 * Closes polls at their `closes_at` (CONTRACT §28), as a DueSource of the one scheduler: a probe of the
 * `polls_closing` partial index finds the due ones (statement_timestamp(), stable, bounds the range),
 * then each closes in a transaction of its own under its channel's order lock, where an UPDATE of the
 * still-open row claims it: a second worker, or a close by hand meanwhile, finds it closed and writes
 * nothing, so each poll closes once, with its events.
 */
@Injectable()
export class PollClosing implements DueSource, OnModuleInit {
  readonly name = 'poll closing';

  constructor(
    private readonly db: DataSource,
    private readonly writes: ChannelWrites,
    private readonly polls: PollsService,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register(this);
  }

  async fireDue(limit: number): Promise<number> {
    const due = await prepared<{ id: string; workspace_id: string; channel_id: string; message_id: string }>(
      this.db.manager,
      `SELECT p.id, p.workspace_id, m.channel_id, p.message_id
         FROM (SELECT id, workspace_id, message_id, closes_at FROM polls
                WHERE closed_at IS NULL AND closes_at IS NOT NULL AND closes_at <= statement_timestamp()
                ORDER BY closes_at LIMIT $1) p
         JOIN messages m ON m.id = p.message_id
        ORDER BY p.closes_at`,
      [limit],
    );
    let closed = 0;
    for (const poll of due) {
      const done = await this.db.transaction(async (m) => {
        const [s] = await this.writes.lock(m, poll.workspace_id, [poll.channel_id]);
        return s ? this.polls.closeDue(s, poll.id, poll.message_id) : false;
      });
      if (done) closed++;
    }
    return closed;
  }
}
