import { Injectable } from '@nestjs/common';

/**
 * What a commit says of the channel events it wrote, for the log's realtime publisher: a run of
 * `count` seqs from `first` in `channel`, and whether the committing instance published them to the
 * sockets itself (`live`) or left them to the publisher.
 */
export interface PublishNote {
  channel: string;
  first: number;
  count: number;
  live: boolean;
}

/**
 * Notes are kept this long: well past a takeover's replay (the saved cursor lags the publisher by at
 * most ~1.5 s, and a new leader takes over within a second).
 */
const KEEP_MS = 30_000;
/** And at most this many seqs (~20 MB; a burst past it only costs repeats on a leader takeover). */
const MAX_KEPT = 200_000;

/**
 * The notes of the last half minute, from this instance's commits and (through EventNotifier) the other
 * instances': the realtime publisher consults it for every channel event it reads, and publishes only
 * what no instance published live. Every instance keeps it, so a new leader skips what was published
 * before it took over.
 */
@Injectable()
export class PublishLedger {
  private readonly live = new Map<string, boolean>();
  /** Keys in the order they were noted, with the time, for expiry (a queue read from `head`). */
  private readonly order: { key: string; at: number }[] = [];
  private head = 0;

  record(notes: readonly PublishNote[], now = Date.now()): void {
    for (const n of notes) {
      for (let s = n.first; s < n.first + n.count; s++) {
        const key = `${n.channel}:${s}`;
        // a live publish wins over a note that left it to the publisher (never the other way)
        if (!this.live.get(key)) this.live.set(key, n.live);
        this.order.push({ key, at: now });
      }
    }
    this.expire(now);
  }

  /** true: published live; false: left to the log's publisher; undefined: no note (yet). */
  lookup(channel: string, seq: number): boolean | undefined {
    return this.live.get(`${channel}:${seq}`);
  }

  private expire(now: number): void {
    while (this.head < this.order.length) {
      const o = this.order[this.head]!;
      if (o.at > now - KEEP_MS && this.order.length - this.head <= MAX_KEPT) break;
      this.live.delete(o.key);
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** A note on the wire, in EventNotifier's message: [channel, first, count, live ? 1 : 0]. */
export type WireNote = [string, number, number, 0 | 1];

export function toWire(n: PublishNote): WireNote {
  return [n.channel, n.first, n.count, n.live ? 1 : 0];
}

export function fromWire(w: unknown): PublishNote | null {
  if (!Array.isArray(w) || w.length !== 4) return null;
  const [channel, first, count, live] = w as unknown[];
  if (
    typeof channel !== 'string' ||
    !Number.isInteger(first) ||
    !Number.isInteger(count) ||
    (count as number) < 1 ||
    (count as number) > 64
  )
    return null;
  return { channel, first: first as number, count: count as number, live: live === 1 };
}
