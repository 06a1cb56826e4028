import { fromWire, PublishLedger, toWire } from './publish-notes';

describe('PublishLedger', () => {
  it('answers per seq of a noted run, and nothing outside it', () => {
    const l = new PublishLedger();
    l.record([{ channel: 'c', first: 4, count: 2, live: true }]);
    expect([3, 4, 5, 6].map((s) => l.lookup('c', s))).toEqual([undefined, true, true, undefined]);
    expect(l.lookup('d', 4)).toBeUndefined();
  });

  it('a live note wins over one that left the seq to the log, whichever came first', () => {
    const l = new PublishLedger();
    l.record([{ channel: 'c', first: 1, count: 1, live: false }]);
    l.record([{ channel: 'c', first: 1, count: 1, live: true }]);
    l.record([{ channel: 'c', first: 1, count: 1, live: false }]);
    expect(l.lookup('c', 1)).toBe(true);
  });

  it('forgets notes after half a minute', () => {
    const l = new PublishLedger();
    l.record([{ channel: 'c', first: 1, count: 1, live: true }], 1_000);
    l.record([{ channel: 'c', first: 2, count: 1, live: true }], 20_000);
    l.record([{ channel: 'c', first: 3, count: 1, live: true }], 32_000);
    expect([1, 2, 3].map((s) => l.lookup('c', s))).toEqual([undefined, true, true]);
  });

  it('reads back what it wrote on the wire and refuses malformed notes', () => {
    const n = { channel: 'c', first: 2, count: 3, live: true };
    expect(fromWire(JSON.parse(JSON.stringify(toWire(n))))).toEqual(n);
    for (const bad of [null, 'x', ['c', 1, 0, 1], ['c', 1.5, 1, 1], [1, 1, 1, 1], ['c', 1, 1000, 1]])
      expect(fromWire(bad)).toBeNull();
  });
});
