import type { ScheduledMessageView } from '../contract/events';
import { mentionsAsExternalIds } from '../drafts/drafts.service';
import { exactTime, isoTime } from '../infra/database/sql';

/** A scheduled_messages row `s` (its channel `c`) as CONTRACT §25 shows it, and its list key. */
export const COLUMNS = `s.id, s.channel_id, c.external_id AS channel_external_id, s.thread_id, s.show_in_channel,
  s.parent_id, s.content, s.attachment_url, ${mentionsAsExternalIds('s.mention_ids')} AS mentions, s.metadata,
  ${isoTime('s.scheduled_at')} AS scheduled_at, s.status, s.error, ${isoTime('s.created_at')} AS created_at,
  ${isoTime('s.updated_at')} AS updated_at, ${exactTime('s.scheduled_at')} AS list_key`;
export const FROM = `scheduled_messages s JOIN channels c ON c.id = s.channel_id`;

export interface ScheduledRow extends ScheduledMessageView {
  list_key: string;
}

export function viewOf(r: ScheduledRow): ScheduledMessageView {
  const { list_key: _, ...view } = r;
  return view;
}
