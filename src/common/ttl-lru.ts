/**
 * A bounded map with a time-to-live per entry: the least recently used entry goes when it is full, an
 * entry older than `ttlMs` is a miss. Reads refresh recency (a Map keeps insertion order, so a hit is
 * moved to the end). Not a cache by itself: the owner decides what to fetch on a miss.
 */
export class TtlLru<K, V> {
  private readonly map = new Map<K, { value: V; staleAt: number }>();

  constructor(
    readonly maxSize: number,
    public ttlMs: number,
  ) {
    if (maxSize < 1) throw new Error('maxSize must be at least 1');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K, now = Date.now()): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (now >= e.staleAt) {
      this.map.delete(key);
      return undefined;
    }
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  set(key: K, value: V, now = Date.now()): void {
    this.map.delete(key);
    this.map.set(key, { value, staleAt: now + this.ttlMs });
    if (this.map.size > this.maxSize) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  /** Deletes every entry whose value matches (a scan: for rare events such as a key rotation). */
  deleteWhere(match: (value: V, key: K) => boolean): void {
    for (const [k, e] of this.map) if (match(e.value, k)) this.map.delete(k);
  }

  clear(): void {
    this.map.clear();
  }
}
