import { MAX_OVERRUNS, OVERRUN_WINDOW_MS, SocketBudget } from './socket-budget';

describe('SocketBudget', () => {
  it('allows a burst of twice the rate, then the rate', () => {
    let now = 0;
    const b = new SocketBudget(10, () => now);
    const burst = Array.from({ length: 25 }, () => b.take());
    expect(burst.filter(Boolean)).toHaveLength(20);
    now += 500; // half a second: five more
    expect(Array.from({ length: 10 }, () => b.take()).filter(Boolean)).toHaveLength(5);
    expect(b.exhausted).toBe(false);
  });

  it('is exhausted only by a socket that keeps going far past its budget', () => {
    let now = 0;
    const b = new SocketBudget(5, () => now);
    for (let i = 0; i < 10 + MAX_OVERRUNS; i++) b.take();
    expect(b.exhausted).toBe(false);
    b.take();
    expect(b.exhausted).toBe(true);
    const calm = new SocketBudget(5, () => now);
    for (let s = 0; s < 30; s++) {
      now += 1000;
      for (let i = 0; i < 8; i++) calm.take(); // 3 over the rate every second: refused, never closed
    }
    expect(calm.exhausted).toBe(false);
  });

  it('stays exhausted until the ten seconds of its overruns are over, without any further take', () => {
    let now = 0;
    const b = new SocketBudget(5, () => now);
    for (let i = 0; i < 11 + MAX_OVERRUNS; i++) b.take();
    now += OVERRUN_WINDOW_MS - 1;
    expect(b.exhausted).toBe(true);
    now += 2;
    expect(b.exhausted).toBe(false);
  });
});
