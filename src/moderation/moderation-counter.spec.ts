import { MemoryModerationCounter } from './moderation-counter';

describe('MemoryModerationCounter', () => {
  afterEach(() => jest.useRealTimers());

  it('counts hits within the sliding window', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const c = new MemoryModerationCounter();
    expect(await c.hit('k', 1000)).toBe(1);
    jest.setSystemTime(1_000_600);
    expect(await c.hit('k', 1000)).toBe(2);
    expect(await c.hit('other', 1000)).toBe(1);
    jest.setSystemTime(1_001_100); // the first hit has left the window
    expect(await c.hit('k', 1000)).toBe(2);
  });

  it('restarts the count once it reaches resetAt', async () => {
    const c = new MemoryModerationCounter();
    expect(await c.hit('v', 60_000, 3)).toBe(1);
    expect(await c.hit('v', 60_000, 3)).toBe(2);
    expect(await c.hit('v', 60_000, 3)).toBe(3);
    expect(await c.hit('v', 60_000, 3)).toBe(1);
  });
});
