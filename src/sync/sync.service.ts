import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelAccess } from '../channels/channel-access.service';
import type { UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { EVENT_COLUMNS, LogCursor, SETTLED_BOUND, settled } from '../events/event-log.reader';
import type { StoredEvent } from '../events/event-types';
import { EnvelopeBuilder } from '../realtime/envelopes';
import type { AnyEnvelope, ServerEventName } from '../contract/realtime';
import { hiddenFrom } from '../messages/visibility';

export interface SyncEvent {
  seq?: number;
  type: ServerEventName;
  channel_id?: string;
  data: unknown;
  created_at: string;
}

/** The message an event is about, in SQL (for leaving out what the viewer may not see). */
const MESSAGE_OF_EVENT = `(CASE WHEN e.type LIKE 'message.%' THEN
  COALESCE(e.payload->'message'->>'id', e.payload->'reaction'->>'message_id', e.payload->>'message_id') END)::uuid`;

const notHidden = (viewer: string) => `NOT EXISTS (SELECT 1 FROM messages msg
  WHERE msg.id = ${MESSAGE_OF_EVENT} AND ${hiddenFrom('msg', `${viewer}::uuid`)})`;

/** Sync cursors: the log position plus when the cursor was issued (for the retention check). */
function encodeSyncCursor(c: LogCursor, issuedAt = Date.now()): string {
  return Buffer.from(`${c.txId}.${c.position}.${Math.floor(issuedAt / 1000)}`).toString('base64url');
}

const MAX_XID8 = 2n ** 64n - 1n;

function decodeSyncCursor(s: string): { cursor: LogCursor; issuedAt: number } {
  const m = /^(\d{1,20})\.(\d{1,20})\.(\d{1,12})$/.exec(Buffer.from(s, 'base64url').toString('utf8'));
  // each number within what it stands for (a transaction id is an xid8, a position a safe integer):
  // a well-formed cursor with numbers out of range is as invalid as a malformed one
  if (!m || BigInt(m[1]!) > MAX_XID8 || !Number.isSafeInteger(Number(m[2])))
    throw AppError.validation('since', 'is not a valid sync cursor');
  return { cursor: { txId: m[1]!, position: Number(m[2]) }, issuedAt: Number(m[3]) * 1000 };
}

const HELD_RETRIES = 20;
const HELD_WAIT_MS = 25;

const toSync = (env: AnyEnvelope): SyncEvent => ({
  ...(env.seq !== undefined ? { seq: env.seq } : {}),
  type: env.type,
  ...(env.channel_id ? { channel_id: env.channel_id } : {}),
  data: env.data,
  created_at: env.ts,
});

/**
 * CONTRACT §12: what a client missed, per channel by seq, or across its channels by log cursor. Sync
 * shows a channel's events from when the caller joined it (history holds what came before), plus
 * the events addressed to the caller (its own membership changes).
 */
@Injectable()
export class SyncService {
  constructor(
    private readonly db: DataSource,
    private readonly access: ChannelAccess,
    private readonly envelopes: EnvelopeBuilder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async channelEvents(p: WorkspacePrincipal, ref: string, afterSeq: number, limit: number) {
    const { channel } = await this.access.open(p, ref);
    const viewer = p.kind === 'user' ? p.userId : null;
    const rows: StoredEvent[] = await this.db.query(
      `SELECT ${EVENT_COLUMNS} FROM events e
        WHERE e.channel_id = $1 AND e.seq > $2 ${viewer ? `AND ${notHidden('$4')}` : ''}
        ORDER BY e.seq LIMIT $3`,
      viewer ? [channel.id, afterSeq, limit + 1, viewer] : [channel.id, afterSeq, limit + 1],
    );
    const has_more = rows.length > limit;
    const page = rows.slice(0, limit);
    const envs = await this.envelopes.build(page, viewer);
    return { events: envs.filter((e): e is AnyEnvelope => !!e).map(toSync), has_more };
  }

  async sync(p: UserPrincipal, since: string | undefined, limit: number) {
    const retentionMs = this.config.SERVICE_EVENT_RETENTION_DAYS * 86_400_000;
    // the bound is read first; then one snapshot for the page and the head, so the returned cursor
    // cannot pass an event that was not visible
    const bound = await this.settledBound(p.workspaceId);
    return this.db.transaction('REPEATABLE READ', async (m) => {
      const head = await this.head(m, p.workspaceId, bound);
      if (!since) return { events: [], next_cursor: encodeSyncCursor(head), has_more: false, gap: false };
      const { cursor, issuedAt } = decodeSyncCursor(since);
      if (issuedAt < Date.now() - retentionMs)
        return { events: [], next_cursor: encodeSyncCursor(head), has_more: false, gap: true };
      const rows: StoredEvent[] = await m.query(
        `SELECT ${EVENT_COLUMNS} FROM events e
          WHERE e.workspace_id = $1 AND (e.tx_id, e.position) > ($2::xid8, $3::bigint) AND ${settled('$6')}
            AND ($4 = ANY(e.audience) OR EXISTS (SELECT 1 FROM channel_members cm
                  WHERE cm.channel_id = e.channel_id AND cm.user_id = $4 AND cm.joined_at <= e.created_at))
            AND ${notHidden('$4')}
          ORDER BY e.workspace_id, e.tx_id, e.position LIMIT $5`,
        [p.workspaceId, cursor.txId, cursor.position, p.userId, limit + 1, bound],
      );
      const has_more = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const next: LogCursor =
        has_more && last ? { txId: last.tx_id, position: last.position } : this.max(head, cursor);
      const envs = await this.envelopes.build(page, p.userId, m);
      return {
        events: envs.filter((e): e is AnyEnvelope => !!e).map(toSync),
        next_cursor: encodeSyncCursor(next),
        has_more,
        gap: false,
      };
    });
  }

  /**
   * The bound, after waiting briefly (at most ~0.5 s) while committed events of this workspace sit
   * above it: they wait for an older transaction still in flight, usually for milliseconds, and a
   * client that just got a 201 expects to see its message in the next sync. One statement a try: the
   * bound, and the workspace's newest event (a backward probe of its (workspace_id, tx_id, position)
   * index) compared with it.
   */
  private async settledBound(workspaceId: string): Promise<string> {
    let bound = '0';
    for (let i = 0; i <= HELD_RETRIES; i++) {
      if (i) await new Promise((r) => setTimeout(r, HELD_WAIT_MS));
      const rows: { bound: string; held: boolean }[] = await this.db.query(
        `SELECT b.bound::text AS bound,
                COALESCE((SELECT e.tx_id FROM events e WHERE e.workspace_id = $1
                           ORDER BY e.workspace_id DESC, e.tx_id DESC, e.position DESC LIMIT 1) >= b.bound, false) AS held
           FROM (SELECT ${SETTLED_BOUND} AS bound) b`,
        [workspaceId],
      );
      bound = rows[0]!.bound;
      if (!rows[0]!.held) break;
    }
    return bound;
  }

  /** The workspace's last settled event (a backward probe of its index, from the bound). */
  private async head(m: EntityManager, workspaceId: string, bound: string): Promise<LogCursor> {
    const rows: { tx_id: string; position: number }[] = await m.query(
      `SELECT e.tx_id::text AS tx_id, e.position FROM events e WHERE e.workspace_id = $1 AND ${settled('$2')}
        ORDER BY e.workspace_id DESC, e.tx_id DESC, e.position DESC LIMIT 1`,
      [workspaceId, bound],
    );
    const r = rows[0];
    return r ? { txId: r.tx_id, position: r.position } : { txId: '0', position: 0 };
  }

  private max(a: LogCursor, b: LogCursor): LogCursor {
    const ta = BigInt(a.txId);
    const tb = BigInt(b.txId);
    return ta > tb || (ta === tb && a.position >= b.position) ? a : b;
  }
}
