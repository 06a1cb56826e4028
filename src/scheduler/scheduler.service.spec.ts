import type { AppConfig } from '../config/config.schema';
import { DUE_BATCH, DueSource, Scheduler } from './scheduler.service';

/** A source with `due` items, firing at most `limit` a call; `fails` makes its calls throw. */
function source(
  name: string,
  due: number,
  fails = false,
): DueSource & { calls: number[]; left: () => number } {
  let left = due;
  const calls: number[] = [];
  return {
    name,
    calls,
    left: () => left,
    async fireDue(limit: number) {
      calls.push(limit);
      if (fails) throw new Error(`${name}: database away`);
      const n = Math.min(limit, left);
      left -= n;
      return n;
    },
  };
}

describe('Scheduler', () => {
  const scheduler = () =>
    new Scheduler({ SERVICE_ROLE: 'worker', SERVICE_SCHEDULER_INTERVAL_MS: 1000 } as unknown as AppConfig);

  it('asks a source again while it fills its batches, and each source in turn', async () => {
    const s = scheduler();
    const busy = source('busy', DUE_BATCH * 2 + 3);
    const idle = source('idle', 0);
    s.register(busy);
    s.register(idle);
    expect(await s.pass()).toBe(DUE_BATCH * 2 + 3);
    expect(busy.calls).toEqual([DUE_BATCH, DUE_BATCH, DUE_BATCH]);
    expect(idle.calls).toEqual([DUE_BATCH]);
    expect(busy.left()).toBe(0);
  });

  it('bounds the batches of one pass, leaving the rest to the next', async () => {
    const s = scheduler();
    const flood = source('flood', DUE_BATCH * 25);
    s.register(flood);
    expect(await s.pass()).toBe(DUE_BATCH * 20);
    expect(flood.left()).toBe(DUE_BATCH * 5);
    expect(await s.pass()).toBe(DUE_BATCH * 5);
  });

  it('a failing source holds up no other, and the pass itself never throws', async () => {
    const s = scheduler();
    const broken = source('broken', 10, true);
    const fine = source('fine', 7);
    s.register(broken);
    s.register(fine);
    expect(await s.pass()).toBe(7);
    expect(broken.calls).toEqual([DUE_BATCH]);
    expect(fine.left()).toBe(0);
  });
});
