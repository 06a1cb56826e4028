import { readFileSync } from 'fs';
import { join } from 'path';
import { CHANNEL_ORDER_LOCK_SEED } from './channel-order';

describe('channel order lock', () => {
  it('chat_send_message takes the lock orderChannelWrites takes: the same key of the channel id', () => {
    const sql = readFileSync(join(__dirname, '../database/functions/chat_send_message.sql'), 'utf8');
    const locks = [...sql.matchAll(/pg_advisory_xact_lock\(([^;]*)\);/g)].map((m) => m[1]);
    expect(locks).toEqual([`hashtextextended(p_channel::text, ${CHANNEL_ORDER_LOCK_SEED})`]);
  });

  it('chat_send_messages tries the same key of each channel id of its batch', () => {
    const sql = readFileSync(join(__dirname, '../database/functions/chat_send_messages.sql'), 'utf8');
    const locks = [...sql.matchAll(/pg_(?:try_)?advisory_xact_lock\((hashtextextended\([^)]*\))\)/g)].map(
      (m) => m[1],
    );
    expect(locks).toEqual([`hashtextextended(c, ${CHANNEL_ORDER_LOCK_SEED})`]);
  });
});
