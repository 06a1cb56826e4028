import { isoTime } from '../../infra/database/sql';
import { STATUS as REMINDER_STATUS } from '../../reminders/reminder-views';
import { uuidKeyedSection } from '../export-document';

/** `reminders` (CONTRACT §25): the user's reminders, without the messages (those are in `messages` or not theirs). Keyset on id. */
export const remindersSection = uuidKeyedSection(
  'reminders',
  `SELECT json_build_object('id', r.id, 'message_id', r.message_id, 'channel_id', r.channel_id,
     'channel_external_id', c.external_id, 'remind_at', ${isoTime('r.remind_at')},
     'status', ${REMINDER_STATUS},
     'fired_at', ${isoTime('r.fired_at')}, 'created_at', ${isoTime('r.created_at')}, 'updated_at', ${isoTime('r.updated_at')})::text AS json,
     r.id AS id
   FROM reminders r JOIN channels c ON c.id = r.channel_id
   WHERE r.user_id = $1 AND r.workspace_id = $2 AND r.id > $3::uuid
   ORDER BY r.id LIMIT $4`,
  'id',
);
