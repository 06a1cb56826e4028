import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { MessageView, ReminderDuePayload, ReminderView } from '../contract/events';
import { isoTime } from '../infra/database/sql';
import { MessageViews } from '../messages/message-view.service';
import { hiddenFrom } from '../messages/visibility';

export interface ReminderRow extends Omit<ReminderView, 'message'> {
  /** The message is unsent, or its user no longer sees it (they block its author): shown nowhere, fired silently. */
  hidden: boolean;
  user_id: string;
  workspace_id: string;
  list_key: string;
  u_external_id: string;
  u_name: string | null;
}

export const STATUS = `CASE WHEN r.remind_at IS NULL THEN 'saved' WHEN r.fired_at IS NULL THEN 'upcoming' ELSE 'due' END`;

/** A reminder `r`'s message `msg` is out of its user's sight: unsent, or by a user they block. */
export const HIDDEN = `(msg.deleted_at IS NOT NULL OR ${hiddenFrom('msg', 'r.user_id')})`;

/** A reminders row `r` (its channel `c`, its user `u`, its message `msg`) as the API shows it, less the message. */
export const COLUMNS = `${HIDDEN} AS hidden, r.id, r.message_id, r.channel_id, c.external_id AS channel_external_id, ${isoTime('r.remind_at')} AS remind_at,
  ${STATUS} AS status, ${isoTime('r.fired_at')} AS fired_at, ${isoTime('r.created_at')} AS created_at,
  ${isoTime('r.updated_at')} AS updated_at, r.user_id, r.workspace_id, u.external_id AS u_external_id, u.name AS u_name`;
export const FROM = `reminders r JOIN channels c ON c.id = r.channel_id JOIN users u ON u.id = r.user_id
  JOIN messages msg ON msg.id = r.message_id`;

/** Reminders rows with their messages, as their users see them. */
@Injectable()
export class ReminderViews {
  constructor(private readonly views: MessageViews) {}

  /**
   * The reminders with their messages as history shows them to their users; hidden ones, and those whose
   * message went, are left out.
   */
  async withMessages(m: EntityManager, all: ReminderRow[]): Promise<ReminderView[]> {
    const found = all.filter((r) => !r.hidden);
    const byUser = new Map<string, ReminderRow[]>();
    for (const r of found) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r]);
    const messages = new Map<string, MessageView>();
    for (const [userId, mine] of byUser) {
      const rendered = await this.views.render(
        m,
        { workspaceId: mine[0]!.workspace_id, userId },
        mine.map((r) => r.message_id),
      );
      for (const v of rendered) messages.set(`${userId}:${v.id}`, v);
    }
    return found.flatMap((r) => {
      const message = messages.get(`${r.user_id}:${r.message_id}`);
      return message ? [viewOf(r, message)] : [];
    });
  }
}

function viewOf(r: ReminderRow, message: MessageView): ReminderView {
  return {
    id: r.id,
    message_id: r.message_id,
    channel_id: r.channel_id,
    channel_external_id: r.channel_external_id,
    remind_at: r.remind_at,
    status: r.status,
    fired_at: r.fired_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
    message,
  };
}

export function webhookPayload(r: ReminderRow): ReminderDuePayload {
  return {
    reminder: {
      id: r.id,
      message_id: r.message_id,
      channel_id: r.channel_id,
      channel_external_id: r.channel_external_id,
      remind_at: r.remind_at!,
      user: { id: r.user_id, external_id: r.u_external_id, name: r.u_name },
    },
  };
}
