import { Batcher } from './batcher';

describe('Batcher', () => {
  it('loads the keys of one turn together, and keys asked for during a load together in the next one', async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const b = new Batcher<string, string>(async (keys) => {
      calls.push(keys);
      if (calls.length === 1) await gate;
      return new Map(keys.map((k) => [k, k.toUpperCase()]));
    });
    const first = [b.load('a'), b.load('z')];
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([['a', 'z']]);
    const rest = [b.load('b'), b.load('c'), b.load('b')];
    release();
    expect(await Promise.all(first)).toEqual(['A', 'Z']);
    expect(await Promise.all(rest)).toEqual(['B', 'C', 'B']);
    expect(calls).toEqual([
      ['a', 'z'],
      ['b', 'c'],
    ]);
  });

  it('fails every waiter of a failed load, and the next load runs normally', async () => {
    let fail = true;
    const b = new Batcher<number, number>(async (keys) => {
      if (fail) throw new Error('db away');
      return new Map(keys.map((k) => [k, k * 2]));
    });
    await expect(Promise.all([b.load(1), b.load(2)])).rejects.toThrow('db away');
    fail = false;
    expect(await b.load(3)).toBe(6);
  });

  it('rejects a key the loader did not answer', async () => {
    const b = new Batcher<string, number>(async () => new Map());
    await expect(b.load('x')).rejects.toThrow('nothing loaded for x');
  });
});
