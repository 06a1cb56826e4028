import type { EventNotifier } from './event-notifier';
import { LiveMessage, LivePublish } from './live-publish';
import type { PublishNote } from './publish-notes';

/** A send's LiveMessage, told apart by its first seq. */
const msg = (seq: number) => ({ channelId: 'c', events: [{ seq }] }) as unknown as LiveMessage;

function setup(sinkUp = true) {
  const notes: PublishNote[] = [];
  const published: number[] = [];
  const live = new LivePublish({
    committed: (n: PublishNote[]) => notes.push(...n),
  } as unknown as EventNotifier);
  if (sinkUp) live.attach((m) => (published.push(Number(m.events[0]!.seq)), true));
  return { live, notes, published };
}

describe('LivePublish', () => {
  it('publishes a lone send at once and notes it live', () => {
    const { live, notes, published } = setup();
    const t = live.reserve('c');
    live.committed(t, 'c', 7, 2, msg(7));
    expect(published).toEqual([7]);
    expect(notes).toEqual([{ channel: 'c', first: 7, count: 2, live: true }]);
  });

  it('holds a send that committed while an earlier one of the channel was in flight, then publishes both in seq order', () => {
    const { live, published } = setup();
    const a = live.reserve('c');
    const b = live.reserve('c');
    live.committed(b, 'c', 11, 1, msg(11)); // a, still in flight, may hold seq 10
    expect(published).toEqual([]);
    live.committed(a, 'c', 10, 1, msg(10));
    expect(published).toEqual([10, 11]);
  });

  it('does not wait for a send of the channel that started after it committed, nor for other channels', () => {
    const { live, published } = setup();
    const other = live.reserve('d');
    const a = live.reserve('c');
    live.committed(a, 'c', 5, 1, msg(5));
    const later = live.reserve('c');
    expect(published).toEqual([5]);
    live.committed(later, 'c', 6, 1, msg(6));
    expect(published).toEqual([5, 6]);
    live.release(other, 'd');
  });

  it('a refused or failed send in flight releases what waited for it', () => {
    const { live, published } = setup();
    const a = live.reserve('c');
    const b = live.reserve('c');
    live.committed(b, 'c', 3, 1, msg(3));
    expect(published).toEqual([]);
    live.release(a, 'c');
    expect(published).toEqual([3]);
  });

  it('a contiguous successor goes out at once even while other sends are in flight', () => {
    const { live, published } = setup();
    const a = live.reserve('c');
    live.committed(a, 'c', 1, 1, msg(1));
    const b = live.reserve('c');
    const c = live.reserve('c');
    live.committed(c, 'c', 2, 1, msg(2));
    expect(published).toEqual([1, 2]);
    live.committed(b, 'c', 3, 1, msg(3));
    expect(published).toEqual([1, 2, 3]);
  });

  it('notes what it could not publish (no realtime server here, or no message) as left to the log', () => {
    const { live, notes } = setup(false);
    const a = live.reserve('c');
    live.committed(a, 'c', 1, 3, msg(1));
    const b = live.reserve('c');
    live.committed(b, 'c', 4, 1, null);
    expect(notes).toEqual([
      { channel: 'c', first: 1, count: 3, live: false },
      { channel: 'c', first: 4, count: 1, live: false },
    ]);
  });

  it('a sink that throws leaves the send to the log', () => {
    const { live, notes } = setup(false);
    live.attach(() => {
      throw new Error('boom');
    });
    const a = live.reserve('c');
    live.committed(a, 'c', 9, 1, msg(9));
    expect(notes).toEqual([{ channel: 'c', first: 9, count: 1, live: false }]);
  });
});
