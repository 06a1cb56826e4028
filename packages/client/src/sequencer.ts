import { EPHEMERAL_EVENTS, type AnyEnvelope } from './events.js';

/** Where an event came from: the socket, `GET /v1/me/sync`, or `GET /v1/channels/:id/events`. */
export type EventSource = 'live' | 'sync' | 'fill';

/**
 * What to do with one event:
 * - `deliver`: hand it to the application (it is the next one of its channel, or not channel-scoped);
 * - `duplicate`: already delivered (same channel seq, same message id, or the same logged event);
 * - `gap`: a live event jumped past `after_seq + 1`: read the channel's events after `after_seq`
 *   (up to `seq - 1`), offer them as `fill`, call `settled(channel, seq - 1)`, then offer this one again;
 * - `unknown`: a live event of a channel with no known seq yet: catch up through sync, then offer it
 *   again with `trustUnknown` (if sync did not place the channel, this event starts it).
 */
export type Decision =
  | { kind: 'deliver' }
  | { kind: 'duplicate' }
  | { kind: 'gap'; channel_id: string; after_seq: number; seq: number }
  | { kind: 'unknown'; channel_id: string; seq: number };

/** A set that forgets its oldest entries past a size (ids of delivered messages). */
export class BoundedSet {
  private readonly items = new Set<string>();
  constructor(private readonly max: number) {}
  has(k: string): boolean {
    return this.items.has(k);
  }
  add(k: string): void {
    if (this.items.has(k)) return;
    this.items.add(k);
    if (this.items.size > this.max) {
      const oldest = this.items.values().next();
      if (!oldest.done) this.items.delete(oldest.value);
    }
  }
  clear(): void {
    this.items.clear();
  }
}

/**
 * The gap logic, pure (no I/O): per channel, the last `seq` delivered. Channel events are delivered in
 * seq order exactly once; a live jump asks for the missing range; sync and fill answers are
 * authoritative for their range (a hole there is an event the caller may not see, e.g. from a blocked
 * user, so it is passed over). `message.new` is also de-duplicated by message id, and logged events
 * without a seq (`channel.state_changed`, `notification.mention`) by their content.
 */
export class Sequencer {
  private readonly last = new Map<string, number>();
  private readonly messageIds: BoundedSet;
  private readonly logged: BoundedSet;

  constructor(opts: { rememberMessages?: number } = {}) {
    this.messageIds = new BoundedSet(opts.rememberMessages ?? 10_000);
    this.logged = new BoundedSet(opts.rememberMessages ?? 10_000);
  }

  /** The last seq delivered for a channel, or undefined when none is known. */
  seq(channelId: string): number | undefined {
    return this.last.get(channelId);
  }

  /** Every channel with a known seq and that seq. */
  seqs(): ReadonlyMap<string, number> {
    return this.last;
  }

  accept(env: AnyEnvelope, source: EventSource, opts: { trustUnknown?: boolean } = {}): Decision {
    const deliver: Decision = { kind: 'deliver' };
    const duplicate: Decision = { kind: 'duplicate' };
    const c = env.channel_id;
    if (env.seq === undefined || c === undefined) {
      if (EPHEMERAL_EVENTS.has(env.type)) return deliver;
      const key = this.loggedKey(env);
      if (this.logged.has(key)) return duplicate;
      this.logged.add(key);
      return deliver;
    }
    const seq = env.seq;
    const last = this.last.get(c);
    if (last !== undefined && seq <= last) return duplicate;
    if (last === undefined && source === 'live' && !opts.trustUnknown)
      return { kind: 'unknown', channel_id: c, seq };
    if (last !== undefined && seq > last + 1 && source === 'live')
      return { kind: 'gap', channel_id: c, after_seq: last, seq };
    this.last.set(c, seq);
    return this.firstTimeMessage(env) ? deliver : duplicate;
  }

  /** A fill of a channel's events up to `seq` is complete: whatever it did not return, the caller may not see. */
  settled(channelId: string, seq: number): void {
    const last = this.last.get(channelId);
    if (last === undefined || seq > last) this.last.set(channelId, seq);
  }

  /** Forget one channel (the caller left it, or it was deleted) or everything (sync said the cursor is too old). */
  forget(channelId?: string): void {
    if (channelId === undefined) {
      this.last.clear();
      return;
    }
    this.last.delete(channelId);
  }

  private firstTimeMessage(env: AnyEnvelope): boolean {
    if (env.type !== 'message.new') return true;
    if (this.messageIds.has(env.data.id)) return false;
    this.messageIds.add(env.data.id);
    return true;
  }

  private loggedKey(env: AnyEnvelope): string {
    if (env.type === 'notification.mention') return `mention|${env.data.message.id}`;
    return `${env.type}|${env.ts}|${JSON.stringify(env.data)}`;
  }
}
