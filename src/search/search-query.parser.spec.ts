import { parseSearchQuery, termsOf } from './search-query.parser';

const shape = (q: string) =>
  parseSearchQuery(q).clauses.map(
    (c) => `${c.negated ? '-' : ''}${c.terms.map((t) => `[${t.text}]`).join('|')}`,
  );

describe('parseSearchQuery', () => {
  it('splits on whitespace of any script into clauses that must all match', () => {
    expect(shape('quick  brown\tfox')).toEqual(['[quick]', '[brown]', '[fox]']);
    expect(shape('会议\u3000三点')).toEqual(['[会议]', '[三点]']);
    expect(shape('')).toEqual([]);
    expect(shape('   ')).toEqual([]);
  });

  it('reads quoted phrases; an unclosed quote runs to the end', () => {
    expect(shape('"quick brown" fox')).toEqual(['[quick brown]', '[fox]']);
    expect(shape('fox "quick brown')).toEqual(['[fox]', '[quick brown]']);
    expect(shape('a"b c"d')).toEqual(['[a]', '[b c]', '[d]']);
    expect(shape('""')).toEqual(['[]']);
    expect(shape('"')).toEqual(['[]']);
  });

  it('OR joins the terms around it, in capitals only, and only between two terms that are not excluded', () => {
    expect(shape('apple OR banana')).toEqual(['[apple]|[banana]']);
    expect(shape('apple OR banana OR "cherry tart" pie')).toEqual([
      '[apple]|[banana]|[cherry tart]',
      '[pie]',
    ]);
    expect(shape('apple or banana')).toEqual(['[apple]', '[or]', '[banana]']);
    expect(shape('OR apple OR')).toEqual(['[apple]']);
    expect(shape('OR')).toEqual([]);
    expect(shape('apple OR OR banana')).toEqual(['[apple]', '[banana]']);
    expect(shape('apple OR -banana')).toEqual(['[apple]', '-[banana]']);
    expect(shape('"OR"')).toEqual(['[OR]']);
  });

  it('a leading - excludes a word or a phrase; elsewhere - is punctuation', () => {
    expect(shape('apple -tart')).toEqual(['[apple]', '-[tart]']);
    expect(shape('apple -"apple tart"')).toEqual(['[apple]', '-[apple tart]']);
    expect(shape('e-mail')).toEqual(['[e-mail]']);
    expect(shape('-')).toEqual(['[-]']);
    expect(shape('- apple')).toEqual(['[-]', '[apple]']);
    expect(shape('--apple')).toEqual(['-[-apple]']);
    expect(shape('-OR')).toEqual(['-[OR]']);
  });

  it('lists the terms in clause order', () => {
    expect(termsOf(parseSearchQuery('a OR b -c "d e"')).map((t) => t.text)).toEqual(['a', 'b', 'c', 'd e']);
  });

  it('never throws, whatever the input', () => {
    const inputs = ['"'.repeat(7), '-'.repeat(256), '\\\'"%_*:&|!()<>', 'OR '.repeat(80), '\u0000\uD800😀'];
    for (const q of inputs) expect(() => parseSearchQuery(q)).not.toThrow();
  });
});
