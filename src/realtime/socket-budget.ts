/** Refusals within OVERRUN_WINDOW_MS after which a socket is closed: it is not slowing down. */
export const MAX_OVERRUNS = 100;
export const OVERRUN_WINDOW_MS = 10_000;

/**
 * A budget of client events (a user's, shared by the user's sockets on one instance): a token bucket of
 * `perSecond` with bursts of twice that, checked before anything else (no parsing, no database).
 * `take()` says whether the event may run; `exhausted` is true once more than MAX_OVERRUNS were refused
 * within ten seconds, and stays so until those ten seconds are over.
 */
export class SocketBudget {
  private tokens: number;
  private refilledAt: number;
  private overruns = 0;
  private overrunsSince = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = perSecond * 2;
    this.refilledAt = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.perSecond * 2, this.tokens + ((t - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    if (t - this.overrunsSince > OVERRUN_WINDOW_MS) {
      this.overruns = 0;
      this.overrunsSince = t;
    }
    this.overruns += 1;
    return false;
  }

  get exhausted(): boolean {
    return this.overruns > MAX_OVERRUNS && this.now() - this.overrunsSince <= OVERRUN_WINDOW_MS;
  }
}
