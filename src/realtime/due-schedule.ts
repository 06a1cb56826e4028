/** setTimeout's longest wait: a time further away is waited for in steps of this. */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * Hands each item to `due` once its time has come, at most `stepMs` late: the items due in the same step
 * share one timer. Tokens expire at whole seconds, so a crowd of sockets whose tokens share an `exp`
 * costs one timer, not a timer, a callback and a timer list each.
 */
export class DueSchedule<T> {
  private readonly steps = new Map<number, { timer: NodeJS.Timeout; items: Set<T> }>();

  constructor(
    private readonly due: (item: T) => void,
    private readonly stepMs = 250,
  ) {}

  /** Schedules the item for `at` (epoch ms); returns its step, which `cancel` takes. */
  add(item: T, at: number): number {
    const step = Math.ceil(at / this.stepMs);
    let entry = this.steps.get(step);
    if (!entry) {
      const wait = Math.min(Math.max(0, step * this.stepMs - Date.now()), MAX_TIMER_MS);
      entry = { timer: setTimeout(() => this.fire(step), wait).unref(), items: new Set() };
      this.steps.set(step, entry);
    }
    entry.items.add(item);
    return step;
  }

  cancel(item: T, step: number): void {
    const entry = this.steps.get(step);
    if (!entry?.items.delete(item) || entry.items.size) return;
    clearTimeout(entry.timer);
    this.steps.delete(step);
  }

  clear(): void {
    for (const { timer } of this.steps.values()) clearTimeout(timer);
    this.steps.clear();
  }

  private fire(step: number): void {
    const entry = this.steps.get(step);
    if (!entry) return;
    this.steps.delete(step);
    const at = step * this.stepMs;
    // a wait longer than a timer takes ends early: wait again
    if (at > Date.now()) for (const item of entry.items) this.add(item, at);
    else for (const item of entry.items) this.due(item);
  }
}
