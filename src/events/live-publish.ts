import { Injectable, Logger } from '@nestjs/common';
import type { MessageView } from '../contract/events';
import { EventNotifier } from './event-notifier';
import type { StoredEvent } from './event-types';
import type { PublishNote } from './publish-notes';

/** What the instance that committed a send holds of it: enough to publish it without reading it back. */
export interface LiveMessage {
  workspaceId: string;
  channelId: string;
  /** The send's channel events as stored (ids, seqs and the message's id and time filled in). */
  events: StoredEvent[];
  /** The message as history renders it (message.new's data). */
  view: MessageView;
  /** Its author (null for a system message). */
  authorId: string | null;
  /** CONTRACT §19: only the author hears of it. */
  shadowed: boolean;
  /** Users who block the author: they are left out. */
  blockerIds: string[];
}

/** Publishes a committed send to the sockets; false when it could not (no realtime server here). */
export type LiveSink = (m: LiveMessage) => boolean;

/**
 * A send within this long after its channel's members changed (channels.members_changed_at) is not
 * published live but left to the log's publisher: it moves the joined and left members' sockets between
 * rooms when it publishes the change, and a live send could overtake that move (a member who just
 * joined would miss it; one who just left would still get it). Past the log's usual lag with margin:
 * the change's stamp is taken at its statement, before the rest of its transaction and the commit.
 * Known limits: the sender reads the stamp before its statement takes the channel's lock, so a change
 * that commits in between (milliseconds) is not seen; and a change the publisher sends more than the
 * grace after its statement (a long membership transaction, a publisher far behind) can still be
 * overtaken. Deciding on what the publisher has sent, under the lock, would close both.
 */
export const ROOM_MOVE_GRACE_MS = 3_000;

/** Channels whose line (last seq published) is kept while idle. */
const MAX_LINES = 10_000;

interface Held {
  first: number;
  count: number;
  message: LiveMessage | null;
  /** Sends of this channel that were in flight here when this one committed (one may hold a lower seq). */
  waitFor: Set<number>;
}

interface Line {
  inflight: Set<number>;
  held: Held[];
  /** The last seq published here, while the line lives. */
  last: number | undefined;
}

/**
 * Delivery without the round trip through the log: the instance that commits a send publishes it at
 * once, from what the request holds, and tells every instance's PublishLedger (EventNotifier), so the
 * log's realtime publisher skips it and stays the safety net for whatever no instance published (a
 * crash between commit and publish, a send written inside a larger transaction, a thread reply whose
 * root counters only the log has).
 *
 * Per channel, this instance publishes its sends in seq order: a send that commits while an earlier
 * send of the same channel is still in flight here waits for it (one statement's time). A send can
 * still overtake an earlier event of its channel that the log's publisher sends (a reaction, an
 * edit) or a send of another instance; the client sees a jump and fills it from
 * /v1/channels/:id/events, as after any gap. A send soon after a membership change is left to the log
 * (ROOM_MOVE_GRACE_MS), so it does not overtake the change's room moves.
 */
@Injectable()
export class LivePublish {
  private readonly logger = new Logger('LivePublish');
  private sink: LiveSink | null = null;
  private readonly lines = new Map<string, Line>();
  private token = 0;

  constructor(private readonly notifier: EventNotifier) {}

  /** The realtime publisher of this instance; returns the detach. */
  attach(sink: LiveSink): () => void {
    this.sink = sink;
    return () => {
      if (this.sink === sink) this.sink = null;
    };
  }

  /** Before a send's statement: its place in its channel's line (give it back with `committed` or `release`). */
  reserve(channelId: string): number {
    const token = ++this.token;
    let line = this.lines.get(channelId);
    if (!line) this.lines.set(channelId, (line = { inflight: new Set(), held: [], last: undefined }));
    line.inflight.add(token);
    return token;
  }

  /**
   * The send committed its events as seqs `first`…`first + count - 1`: publish them (`message`; null
   * leaves them to the log's publisher), in seq order with this instance's other sends to the channel.
   */
  committed(
    token: number,
    channelId: string,
    first: number,
    count: number,
    message: LiveMessage | null,
  ): void {
    const line = this.done(token, channelId);
    if (!line) return;
    line.held.push({ first, count, message, waitFor: new Set(line.inflight) });
    this.flush(channelId, line);
  }

  /** The send wrote nothing (refused, failed, a replay). */
  release(token: number, channelId: string): void {
    const line = this.done(token, channelId);
    if (line) this.flush(channelId, line);
  }

  private done(token: number, channelId: string): Line | undefined {
    const line = this.lines.get(channelId);
    if (!line || !line.inflight.delete(token)) return undefined;
    for (const h of line.held) h.waitFor.delete(token);
    return line;
  }

  private flush(channelId: string, line: Line): void {
    line.held.sort((a, b) => a.first - b.first);
    const notes: PublishNote[] = [];
    for (let h = line.held[0]; h; h = line.held[0]) {
      if (h.waitFor.size && (line.last === undefined || h.first !== line.last + 1)) break;
      line.held.shift();
      notes.push({ channel: channelId, first: h.first, count: h.count, live: this.publish(h.message) });
      line.last = h.first + h.count - 1;
    }
    if (this.lines.size > MAX_LINES) this.forgetIdle();
    if (notes.length) this.notifier.committed(notes);
  }

  /** Idle lines keep their last seq (a successor goes out at once); past MAX_LINES channels they are dropped. */
  private forgetIdle(): void {
    for (const [id, line] of this.lines) if (!line.inflight.size && !line.held.length) this.lines.delete(id);
  }

  private publish(m: LiveMessage | null): boolean {
    if (!m || !this.sink) return false;
    try {
      return this.sink(m);
    } catch (e) {
      this.logger.warn(`publishing a send live: ${String(e)}`);
      return false;
    }
  }
}
