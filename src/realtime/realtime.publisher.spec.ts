import type { StoredEvent } from '../events/event-types';
import { ROOM_MOVE_GRACE_MS } from '../events/live-publish';
import { inSeqOrder, RoomMoves } from './realtime.publisher';

const ev = (id: string, channel: string | null, seq: number | null) =>
  ({
    id,
    channel_id: channel,
    seq,
    workspace_id: 'w',
    type: 'message.created',
    payload: {},
    audience: null,
  }) as unknown as StoredEvent;

describe('inSeqOrder', () => {
  it("puts each channel's events of a batch in seq order, in the slots that channel had", () => {
    // log (transaction-id) order: a later lock holder committed with a lower transaction id
    const batch = [
      ev('a6', 'a', 6),
      ev('b2', 'b', 2),
      ev('a5', 'a', 5),
      ev('x', null, null),
      ev('b1', 'b', 1),
      ev('a7', 'a', 7),
    ];
    expect(inSeqOrder(batch).map((e) => e.id)).toEqual(['a5', 'b1', 'a6', 'x', 'b2', 'a7']);
  });

  it('leaves an ordered batch as it is', () => {
    const batch = [ev('a1', 'a', 1), ev('b1', 'b', 1), ev('a2', 'a', 2)];
    expect(inSeqOrder(batch)).toEqual(batch);
  });
});

describe('RoomMoves', () => {
  it('keeps who joined and who left a room lately, the last move of a user winning, each for ROOM_MOVE_GRACE_MS', () => {
    const moves = new RoomMoves();
    moves.joined('channel:a', 'user:1', 0);
    moves.joined('channel:a', 'user:2', 0);
    moves.left('channel:a', 'user:2', 10);
    moves.left('channel:a', 'user:3', 10);
    moves.joined('channel:a', 'user:3', 20);
    expect(moves.of('channel:a', 30)).toEqual({ joined: ['user:1', 'user:3'], left: ['user:2'] });
    expect(moves.of('channel:b', 30)).toBeUndefined();
    // each user's move expires on its own
    expect(moves.of('channel:a', ROOM_MOVE_GRACE_MS)).toEqual({ joined: ['user:3'], left: ['user:2'] });
    expect(moves.of('channel:a', 10 + ROOM_MOVE_GRACE_MS)).toEqual({ joined: ['user:3'], left: [] });
    expect(moves.of('channel:a', 20 + ROOM_MOVE_GRACE_MS)).toBeUndefined();
  });
});
