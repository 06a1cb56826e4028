/**
 * Runs `task` every `everyMs` (and once after `firstMs`, when given), never two runs at once: a tick
 * that finds the previous run still going is skipped. The timers do not keep the process alive; `stop`
 * clears them and waits for the run in flight.
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly everyMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly firstMs?: number,
  ) {}

  start(): void {
    if (this.timer) return;
    const tick = () => {
      if (!this.running) this.running = this.task().finally(() => (this.running = null));
    };
    this.timer = setInterval(tick, this.everyMs);
    this.timer.unref();
    if (this.firstMs !== undefined) {
      this.first = setTimeout(tick, this.firstMs);
      this.first.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.first) clearTimeout(this.first);
    this.timer = this.first = null;
    await this.running;
  }
}
