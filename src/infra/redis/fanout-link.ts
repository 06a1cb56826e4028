import type Redis from 'ioredis';

/**
 * How long every connection of the Socket.IO adapter must have been up before the link counts as steady:
 * the other instances' subscribers reconnect on the same schedule (RedisService's retry, at most
 * RECONNECT_MAX_MS apart), and what is published before they have subscribed again is lost to them.
 */
export const FANOUT_SETTLE_MS = 600;

/**
 * The Socket.IO Redis adapter's connections (its publisher and subscriber) as the realtime publisher
 * needs to know them: whether a publish now reaches the other instances (`steady`), and whether one it
 * made was refused since (`refusals`, `settled`). The adapter attaches its connections and routes each
 * publish through `track`; the adapter itself publishes without waiting for an answer.
 */
/** Where the link stood before some publishes (FanoutLink.mark). */
export interface FanoutMark {
  made: number;
  refused: number;
  downs: number;
}

export class FanoutLink {
  private readonly conns: Redis[] = [];
  /** Publishes not answered yet, each with its number in the order they were made. */
  private readonly inflight = new Map<Promise<unknown>, number>();
  private made = 0;
  private readonly steadyListeners = new Set<() => void>();
  /** Publishes refused so far (Redis away, or gone while they were queued). */
  private refused = 0;
  /** Times the link went down so far. */
  private downs = 0;
  /** When the last attached connection became ready (0 while one is down). */
  private upSince = 0;
  private timer: NodeJS.Timeout | null = null;

  /** The adapter's connections; the link is steady once all of them have been ready for FANOUT_SETTLE_MS. */
  attach(...conns: Redis[]): void {
    for (const c of conns) {
      this.conns.push(c);
      c.on('ready', () => this.changed());
      c.on('close', () => this.changed());
      c.on('end', () => this.changed());
    }
    this.changed();
  }

  /** No adapter connection attached (no Redis, or the adapter is not made yet): nothing to wait for. */
  get attached(): boolean {
    return this.conns.length > 0;
  }

  /** Every connection is up, and has been for FANOUT_SETTLE_MS (what is published now reaches every instance). */
  steady(now = Date.now()): boolean {
    return !this.attached || (this.upSince > 0 && now - this.upSince >= FANOUT_SETTLE_MS);
  }

  /** A publish of the adapter: counted until answered; a refusal is counted and answered as 0 receivers. */
  track(publish: Promise<number>, onRefused: (err: unknown) => void): Promise<number> {
    const p = publish.catch((err: unknown) => {
      this.refused++;
      onRefused(err);
      return 0;
    });
    this.inflight.set(p, this.made++);
    void p.finally(() => this.inflight.delete(p));
    return p;
  }

  /** A mark before some publishes, for `reachedAll`. */
  mark(): FanoutMark {
    return { made: this.made, refused: this.refused, downs: this.downs };
  }

  /**
   * Whether the publishes made since `mark` reached every instance: all answered within `ms`, none
   * refused, and the link steady throughout. A drop in between counts against them even when they were
   * answered: a publish queued or in flight across it may be sent on reconnecting, before the other
   * instances have subscribed again. An answer that does not come (a connection gone or hanging) counts
   * as a refusal.
   */
  async reachedAll(mark: FanoutMark, ms: number): Promise<boolean> {
    const waiting = [...this.inflight].filter(([, n]) => n >= mark.made).map(([p]) => p);
    const answered = !waiting.length || (await within(Promise.all(waiting), ms));
    return answered && this.refused === mark.refused && this.downs === mark.downs && this.steady();
  }

  /** `listener` runs each time the link becomes steady again. Returns its removal. */
  onSteady(listener: () => void): () => void {
    this.steadyListeners.add(listener);
    return () => this.steadyListeners.delete(listener);
  }

  private changed(): void {
    const up = this.conns.every((c) => c.status === 'ready');
    if (!up) {
      if (this.upSince) this.downs++;
      this.upSince = 0;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      return;
    }
    if (this.upSince) return;
    this.upSince = Date.now();
    this.timer = setTimeout(() => {
      this.timer = null;
      for (const l of this.steadyListeners) l();
    }, FANOUT_SETTLE_MS);
    this.timer.unref();
  }
}

/** Whether `p` settles within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
