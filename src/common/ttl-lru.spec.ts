import { TtlLru } from './ttl-lru';

describe('TtlLru', () => {
  it('evicts the least recently used entry when full', () => {
    const c = new TtlLru<string, number>(2, 1000);
    c.set('a', 1, 0);
    c.set('b', 2, 0);
    expect(c.get('a', 1)).toBe(1); // a is now the most recent
    c.set('c', 3, 2);
    expect(c.get('b', 3)).toBeUndefined();
    expect(c.get('a', 3)).toBe(1);
    expect(c.get('c', 3)).toBe(3);
    expect(c.size).toBe(2);
  });

  it('misses an entry once its TTL is over', () => {
    const c = new TtlLru<string, number>(10, 100);
    c.set('a', 1, 0);
    expect(c.get('a', 99)).toBe(1);
    expect(c.get('a', 100)).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('deletes by predicate and clears', () => {
    const c = new TtlLru<string, { ws: string }>(10, 1000);
    c.set('k1', { ws: 'a' }, 0);
    c.set('k2', { ws: 'b' }, 0);
    c.set('k3', { ws: 'a' }, 0);
    c.deleteWhere((v) => v.ws === 'a');
    expect([c.get('k1', 1), c.get('k2', 1)?.ws, c.get('k3', 1)]).toEqual([undefined, 'b', undefined]);
    c.clear();
    expect(c.size).toBe(0);
  });
});
