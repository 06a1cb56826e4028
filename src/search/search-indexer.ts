import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { LogTail, LogTailPart, PartResult, PassInfo, PassStatement } from '../events/log-tail';
import { SavedCursor } from '../events/saved-cursor';
import { LeaderLease, Leadership } from '../infra/database/leadership';
import { Metrics } from '../ops/metrics';

/** The indexer's row in event_relay_cursors (migration 1763691090000). */
export const SEARCH_CURSOR = 'search';
const BATCH = 500;
/** With no message among the new events, the cursor is still moved past them this often (one small write). */
const JUMP_EVERY_MS = 10_000;

interface Output {
  events: number;
  /** Where the cursor is now (null: the statement did not move it). */
  tx: string | null;
  pos: number | string | null;
  first: { position: number | string; created_at: string } | null;
}

/**
 * Writes the search documents of new messages (CONTRACT §8: findable within 1 s; here at once, see
 * below), as its part of the shared log pass: up to BATCH `message.created` events after its cursor and
 * below the settled bound, their messages' documents (chat_search_doc) inserted into message_search in
 * one data-modifying CTE, and the cursor moved in the same statement. The documents and the cursor
 * commit together, so a search (SearchRepository) that matches the documents and computes at query time
 * those of the messages whose events lie after the cursor sees every message exactly once, as soon as
 * its send committed.
 *
 * The insert leaves documents it finds in place (ON CONFLICT DO NOTHING): an edit or an unsend that got
 * there first wrote the newer one. It reads its messages FOR KEY SHARE, so a message deleted meanwhile
 * is passed over instead of failing the foreign key. One instance indexes at a time (Leadership); two
 * for a moment (a lease changing hands) would write the same documents, and the cursor never moves back.
 */
@Injectable()
export class SearchIndexer implements LogTailPart, OnApplicationBootstrap, OnModuleDestroy {
  readonly name = 'search';
  private readonly logger = new Logger('SearchIndexer');
  private readonly lease: LeaderLease;
  /** Loaded by a new leader; written by the pass's own statement (search_save), not by `saveInto`. */
  private readonly cursor: SavedCursor;
  private savedAt = 0;
  private started = false;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly tail: LogTail,
    leadership: Leadership,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.cursor = new SavedCursor(db, SEARCH_CURSOR);
    this.lease = leadership.lease('search-indexer', (leading) => this.leading(leading));
  }

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE !== 'api') this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.tail.register(this);
    this.lease.start();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.tail.unregister(this);
    await this.lease.stop();
  }

  private leading(leading: boolean): void {
    this.cursor.reset();
    this.metrics.followerAt('search');
    if (!leading || !this.started) return;
    this.loading = this.cursor
      .load()
      .then((at) => {
        if (!at) throw new Error(`no '${SEARCH_CURSOR}' row in event_relay_cursors`);
        if (!this.lease.isLeader) return this.cursor.reset();
        this.savedAt = Date.now();
        this.tail.nudge();
      })
      .catch((e: unknown) => this.logger.warn(`loading the cursor: ${String(e)}`))
      .finally(() => (this.loading = null));
  }

  build(q: PassStatement): string | null {
    const at = this.cursor.at;
    if (!this.started || !this.lease.isLeader || !at || this.loading) return null;
    const jump = Date.now() - this.savedAt > JUMP_EVERY_MS;
    q.cte(
      'search_ev',
      `SELECT e.tx_id, e.position, e.created_at, (e.payload->'message'->>'id')::uuid AS id
         FROM events e
        WHERE (e.tx_id, e.position) > (${q.param(at.txId, 'xid8')}, ${q.param(at.position, 'bigint')})
          AND e.tx_id < ${q.bound} AND e.type = 'message.created'
        ORDER BY e.tx_id, e.position LIMIT ${BATCH}`,
    );
    // per message by its key (OFFSET 0: not flattened into a join the planner could turn into a scan of
    // messages; the statement keeps a generic plan made while the table was small)
    q.cte(
      'search_ins',
      `INSERT INTO message_search (message_id, channel_id, doc)
       SELECT m.id, m.channel_id, chat_search_doc(m.content, m.channel_id)
         FROM (SELECT DISTINCT id FROM search_ev WHERE id IS NOT NULL) x
        CROSS JOIN LATERAL (SELECT msg.id, msg.channel_id, msg.content FROM messages msg
                             WHERE msg.id = x.id AND msg.deleted_at IS NULL OFFSET 0 FOR KEY SHARE) m
       ON CONFLICT (message_id) DO NOTHING`,
    );
    // a full batch: on from its last event; a short one read every message event below the bound, so
    // the cursor goes to the bound itself (written when there were messages, or every JUMP_EVERY_MS)
    q.cte(
      'search_next',
      `SELECT CASE WHEN n.c >= ${BATCH} THEN l.tx_id ELSE ${q.bound} END AS tx,
              CASE WHEN n.c >= ${BATCH} THEN l.position ELSE 0 END AS pos
         FROM (SELECT count(*) AS c FROM search_ev) n
         LEFT JOIN LATERAL (SELECT tx_id, position FROM search_ev ORDER BY tx_id DESC, position DESC LIMIT 1) l ON true
        WHERE n.c > 0 OR ${jump ? 'true' : 'false'}`,
    );
    q.cte(
      'search_save',
      `UPDATE event_relay_cursors c SET tx_id = s.tx, position = s.pos, updated_at = now()
         FROM search_next s
        WHERE c.name = '${SEARCH_CURSOR}' AND (c.tx_id, c.position) < (s.tx, s.pos)`,
    );
    // the cursor moves to `next` whether this statement wrote it or found it already there (another
    // leader's write): either way the table holds it or a later one
    return `(SELECT json_build_object(
        'events', (SELECT count(*) FROM search_ev),
        'tx', (SELECT tx::text FROM search_next), 'pos', (SELECT pos FROM search_next),
        'first', (SELECT json_build_object('position', position, 'created_at', created_at) FROM search_ev ORDER BY tx_id, position LIMIT 1)))`;
  }

  async apply(output: unknown, pass: PassInfo): Promise<PartResult> {
    const o = output as Output;
    this.metrics.followerAt('search', o.first ?? undefined, pass.head);
    if (o.tx !== null && o.pos !== null) {
      this.cursor.advance({ txId: o.tx, position: Number(o.pos) });
      this.savedAt = Date.now();
    }
    return { events: o.events, more: o.events >= BATCH };
  }
}
