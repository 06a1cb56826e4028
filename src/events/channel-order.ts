import type { EntityManager } from 'typeorm';

const ORDERED = 'chat:orderedChannels';

/**
 * A channel's order lock is `pg_advisory_xact_lock(hashtextextended(<channel id as text>, 7243))`.
 * chat_send_message (src/database/functions/chat_send_message.sql) takes the same lock itself, with
 * the seed written out rather than through a helper function, so the send path makes no extra call;
 * channel-order.spec.ts holds the two to the same key.
 */
export const CHANNEL_ORDER_LOCK_SEED = 7243;

/**
 * Serialises the writers of a channel so that their transaction ids follow the order in which they
 * take the channel's next `seq`. The log is read in transaction-id order; a row lock alone would not
 * do, because `SELECT … FOR UPDATE` assigns the transaction id *before* it waits, so a writer that
 * queued first but got the lock second would carry the smaller id and a later seq. An advisory lock
 * assigns no id: taken before the transaction's first write, every holder gets its id after the
 * previous holder committed. Then per channel, log order = seq order, live and in sync.
 *
 * Call it first in a transaction that appends channel events (before any INSERT/UPDATE/DELETE or
 * row lock); EventLogService.append refuses a channel event whose channel was not ordered so.
 */
export async function orderChannelWrites(m: EntityManager, channelIds: string[]): Promise<void> {
  const ids = [...new Set(channelIds)].sort();
  if (!ids.length) return;
  // taking advisory locks never assigns a transaction id, so the check may read it before or after them;
  // count(*) makes the subquery take every lock, in order
  const rows: { xid: string | null }[] = await m.query(
    `SELECT pg_current_xact_id_if_assigned()::text AS xid,
            (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended(id, ${CHANNEL_ORDER_LOCK_SEED}))
                                     FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n) ORDER BY n) l) AS locked`,
    [ids],
  );
  const data = runnerData(m);
  if (!data || rows[0]?.xid) return; // the transaction wrote before ordering: its channel events are refused
  const set = (data[ORDERED] as Set<string> | undefined) ?? new Set<string>();
  for (const id of ids) set.add(id);
  data[ORDERED] = set;
}

function runnerData(m: EntityManager): Record<string, unknown> | undefined {
  return m.queryRunner?.data;
}

export function isChannelOrdered(m: EntityManager, channelId: string): boolean {
  const set = runnerData(m)?.[ORDERED] as Set<string> | undefined;
  return !!set?.has(channelId);
}
