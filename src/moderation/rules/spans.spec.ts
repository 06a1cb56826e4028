import { excerptAround, maskSpans, mergeSpans } from './spans';

describe('spans', () => {
  it('merges overlapping and touching spans', () => {
    expect(
      mergeSpans([
        { start: 5, end: 8 },
        { start: 0, end: 2 },
        { start: 7, end: 10 },
        { start: 10, end: 12 },
      ]),
    ).toEqual([
      { start: 0, end: 2 },
      { start: 5, end: 12 },
    ]);
  });

  it('masks each span with ***', () => {
    expect(
      maskSpans('a bb c dd e', [
        { start: 2, end: 4 },
        { start: 7, end: 9 },
      ]),
    ).toBe('a *** c *** e');
    expect(maskSpans('whole', [{ start: 0, end: 5 }])).toBe('***');
    expect(maskSpans('none', [])).toBe('none');
  });

  it('keeps a short text whole in the excerpt, whitespace squeezed', () => {
    expect(excerptAround('hello\n\n  world', { start: 0, end: 5 })).toBe('hello world');
  });

  it('cuts a long text around the match to at most 100 characters', () => {
    const text = `${'a'.repeat(300)} MATCH ${'b'.repeat(300)}`;
    const start = text.indexOf('MATCH');
    const e = excerptAround(text, { start, end: start + 5 });
    expect(Array.from(e).length).toBeLessThanOrEqual(100);
    expect(e).toContain('MATCH');
    expect(e.startsWith('…') && e.endsWith('…')).toBe(true);
    const head = excerptAround(text, { start: 0, end: 3 });
    expect(head.startsWith('aaa') && head.endsWith('…')).toBe(true);
    const tail = excerptAround(text, { start: text.length - 3, end: text.length });
    expect(tail.startsWith('…') && tail.endsWith('bbb')).toBe(true);
    expect(Array.from(excerptAround(text, { start: 0, end: text.length })).length).toBeLessThanOrEqual(100);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(150);
    const e = excerptAround(text, { start: 100, end: 102 });
    expect(e.replace(/…/g, '')).toMatch(/^(?:😀)+$/u);
    expect(Array.from(e).length).toBeLessThanOrEqual(100);
  });
});
