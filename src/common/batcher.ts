/**
 * Loads by key, many keys at a time: a load starts after the current turn of the event loop (so the
 * keys asked for in the same I/O phase go together), and keys asked for while a load runs wait for it
 * to finish and then go together in the next one. One at a time, so a connection storm costs a few
 * queries, not one per socket, and a lone request waits for no more than a turn of the loop.
 */
export class Batcher<K, V> {
  private waiting = new Map<K, { resolve: (v: V) => void; reject: (e: unknown) => void }[]>();
  private running = false;

  constructor(private readonly loadMany: (keys: K[]) => Promise<Map<K, V>>) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const list = this.waiting.get(key);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(key, [{ resolve, reject }]);
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    await new Promise<void>((r) => setImmediate(r));
    while (this.waiting.size) {
      const batch = this.waiting;
      this.waiting = new Map();
      try {
        const values = await this.loadMany([...batch.keys()]);
        for (const [k, ws] of batch) {
          const v = values.get(k);
          for (const w of ws) {
            if (v === undefined) w.reject(new Error(`nothing loaded for ${String(k)}`));
            else w.resolve(v);
          }
        }
      } catch (e) {
        for (const ws of batch.values()) for (const w of ws) w.reject(e);
      }
    }
    this.running = false;
  }
}
