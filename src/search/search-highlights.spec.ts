import { ContentToken, highlightSpans } from './search-highlights';
import type { SearchPattern } from './search-tsquery';

const word = (lexeme: string): SearchPattern => [{ lexeme, prefix: false }];
const t = (pos: number, lexeme: string, start: number, end: number): ContentToken => ({
  pos,
  lexeme,
  start,
  end,
});

describe('highlightSpans', () => {
  it('marks every occurrence of a word', () => {
    const content = 'Fig jam with fig bread';
    expect(highlightSpans(content, [t(1, 'fig', 0, 3), t(4, 'fig', 13, 16)], [word('fig')])).toEqual([
      [0, 3],
      [13, 16],
    ]);
  });

  it('marks a phrase from its first word to its last, only where the words are adjacent', () => {
    const content = 'fig tree, tree fig';
    const tokens = [t(1, 'fig', 0, 3), t(2, 'tree', 4, 8), t(3, 'tree', 10, 14), t(4, 'fig', 15, 18)];
    const phrase: SearchPattern = [
      { lexeme: 'fig', prefix: false },
      { lexeme: 'tree', prefix: false },
    ];
    expect(highlightSpans(content, tokens, [phrase])).toEqual([[0, 8]]);
  });

  it('marks runs of bigrams, and a prefix character inside a longer bigram', () => {
    const content = '明天的会议在三点';
    const tokens = [t(4, '会议', 3, 5), t(5, '议在', 4, 6), t(1, '明天', 0, 2)];
    expect(
      highlightSpans(content, tokens, [
        [
          { lexeme: '会议', prefix: false },
          { lexeme: '议在', prefix: false },
        ],
      ]),
    ).toEqual([[3, 6]]);
    expect(highlightSpans(content, tokens, [[{ lexeme: '明', prefix: true }]])).toEqual([[0, 1]]);
  });

  it('merges overlapping spans and converts code points to UTF-16 offsets', () => {
    const content = '😀 会议会议 fig';
    const tokens = [t(1, '会议', 2, 4), t(2, '议会', 3, 5), t(3, '会议', 4, 6), t(4, 'fig', 7, 10)];
    expect(
      highlightSpans(content, tokens, [word('会议'), word('fig'), [{ lexeme: '议', prefix: true }]]),
    ).toEqual([
      [3, 7],
      [8, 11],
    ]);
    expect(content.slice(8, 11)).toBe('fig');
  });

  it('is empty without tokens or patterns', () => {
    expect(highlightSpans('x', [], [word('x')])).toEqual([]);
    expect(highlightSpans('x', [t(1, 'x', 0, 1)], [])).toEqual([]);
  });
});
