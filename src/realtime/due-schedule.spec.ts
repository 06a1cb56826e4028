import { DueSchedule } from './due-schedule';

describe('DueSchedule', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('hands over each item once its time has come, the items of one step together, at most a step late', () => {
    const fired: [string, number][] = [];
    const schedule = new DueSchedule<string>((item) => fired.push([item, Date.now()]), 250);
    schedule.add('a', 1_000_100);
    schedule.add('b', 1_000_200);
    schedule.add('c', 1_000_600);
    expect(jest.getTimerCount()).toBe(2); // a and b share the step ending at 1_000_250
    jest.advanceTimersByTime(249);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual([
      ['a', 1_000_250],
      ['b', 1_000_250],
    ]);
    jest.advanceTimersByTime(1_000);
    expect(fired.map(([item]) => item)).toEqual(['a', 'b', 'c']);
    expect(fired[2]![1]).toBe(1_000_750);
  });

  it('a cancelled item is not handed over, and the last one out of a step takes its timer', () => {
    const fired: string[] = [];
    const schedule = new DueSchedule<string>((item) => fired.push(item), 250);
    const a = schedule.add('a', 1_000_100);
    const b = schedule.add('b', 1_000_100);
    schedule.cancel('a', a);
    expect(jest.getTimerCount()).toBe(1);
    schedule.cancel('b', b);
    expect(jest.getTimerCount()).toBe(0);
    schedule.add('c', 1_000_100);
    jest.advanceTimersByTime(1_000);
    expect(fired).toEqual(['c']);
  });

  it('a time beyond the longest timer is waited for in several timers, and a time past is due at once', () => {
    const fired: string[] = [];
    const schedule = new DueSchedule<string>((item) => fired.push(item), 250);
    schedule.add('far', 1_000_000 + 30 * 24 * 3600_000); // 30 days: more than setTimeout's 24.8
    schedule.add('past', 1);
    jest.advanceTimersByTime(0);
    expect(fired).toEqual(['past']);
    jest.advanceTimersByTime(29 * 24 * 3600_000);
    expect(fired).toEqual(['past']);
    jest.advanceTimersByTime(24 * 3600_000);
    expect(fired).toEqual(['past', 'far']);
  });

  it('clear stops every timer', () => {
    const fired: string[] = [];
    const schedule = new DueSchedule<string>((item) => fired.push(item), 250);
    schedule.add('a', 1_000_100);
    schedule.add('b', 1_000_900);
    schedule.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(2_000);
    expect(fired).toEqual([]);
  });
});
