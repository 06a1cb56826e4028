import { Logger } from '@nestjs/common';
import type { EventNotifier } from './event-notifier';

/**
 * The wake-up loop of a reader that follows the event log (the webhook and push relays): one pass at
 * a time; a commit with events (on any instance, through EventNotifier) asks for a pass soon, and
 * otherwise `idleDelay` says when to look again (also after a failed pass). `stop()` waits for the
 * pass in flight.
 */
export class LogFollower {
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unsubscribe?: () => void;

  constructor(
    private readonly logger: Logger,
    private readonly notifier: EventNotifier,
    private readonly pass: () => Promise<unknown>,
    /** Milliseconds until the next pass when nothing nudges earlier. */
    private readonly idleDelay: () => number,
    private readonly nudgeDelayMs = 0,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.notifier.onCommitted(() => this.nudge());
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Asks for a pass soon (coalesced with one in flight or already due). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(this.nudgeDelayMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return; // an earlier wake-up is already set
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, ms);
  }

  private run(): void {
    if (this.running || this.stopped) return;
    this.again = false;
    this.running = this.pass()
      .then(() => undefined)
      .catch((err: unknown) => this.logger.warn(`pass failed: ${String(err)}`))
      .finally(() => {
        this.running = null;
        this.schedule(this.again ? this.nudgeDelayMs : this.idleDelay());
      });
  }
}
