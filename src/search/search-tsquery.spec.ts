import { parseSearchQuery } from './search-query.parser';
import { compileQuery, patternOf, SearchToken } from './search-tsquery';

const w = (pos: number, lexeme: string): SearchToken => ({ pos, lexeme, kind: 'w' });
const b = (pos: number, lexeme: string): SearchToken => ({ pos, lexeme, kind: 'b' });
const u = (pos: number, lexeme: string): SearchToken => ({ pos, lexeme, kind: 'u' });

describe('patternOf', () => {
  it('keeps one lexeme per position, the bigram over the trailing unigram; a lone unigram is a prefix', () => {
    expect(patternOf([w(1, 'quick'), w(2, 'brown')])).toEqual([
      { lexeme: 'quick', prefix: false },
      { lexeme: 'brown', prefix: false },
    ]);
    expect(patternOf([b(1, '会议'), b(2, '议在'), u(2, '在')])).toEqual([
      { lexeme: '会议', prefix: false },
      { lexeme: '议在', prefix: false },
    ]);
    expect(patternOf([u(1, '会')])).toEqual([{ lexeme: '会', prefix: true }]);
    expect(patternOf([w(2, 'iphone'), u(3, '手'), w(1, 'buy')]).map((p) => p.lexeme)).toEqual([
      'buy',
      'iphone',
      '手',
    ]);
  });
});

describe('compileQuery', () => {
  const compile = (q: string, tokens: SearchToken[][]) => compileQuery(parseSearchQuery(q), tokens);

  it('ANDs clauses, ORs alternatives, chains phrases with <-> and negates exclusions', () => {
    const c = compile('a OR "b c" -d', [[w(1, 'a')], [w(1, 'b'), w(2, 'c')], [w(1, 'd')]]);
    expect(c.tsquery).toBe("('a' | ('b' <-> 'c')) & !'d'");
    expect(c.patterns.map((p) => p.map((x) => x.lexeme))).toEqual([['a'], ['b', 'c']]);
    expect(c.onlyExcluded).toBe(false);
  });

  it('drops terms without words and clauses left empty', () => {
    expect(compile('!!! fox', [[], [w(1, 'fox')]]).tsquery).toBe("'fox'");
    expect(compile('!!! OR fox', [[], [w(1, 'fox')]]).tsquery).toBe("'fox'");
    expect(compile('!!! ???', [[], []])).toEqual({ tsquery: null, patterns: [], onlyExcluded: false });
  });

  it('flags a query whose only words are excluded', () => {
    expect(compile('-fox !!!', [[w(1, 'fox')], []])).toMatchObject({ tsquery: "!'fox'", onlyExcluded: true });
  });

  it('writes prefixes and escapes quotes and backslashes in lexemes', () => {
    expect(compile('会', [[u(1, '会')]]).tsquery).toBe("'会':*");
    expect(compile('x', [[w(1, "o'b\\c")]]).tsquery).toBe("'o''b\\\\c'");
  });
});
