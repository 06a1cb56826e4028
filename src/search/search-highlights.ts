import type { SearchPattern } from './search-tsquery';

/** A token of the message as `search_tokens()` cut it, with code point offsets into the content. */
export interface ContentToken {
  pos: number;
  lexeme: string;
  start: number;
  end: number;
}

/** A matched span: [start, end) in JavaScript string indices (UTF-16 code units), CONTRACT §8. */
export type Span = [number, number];

/**
 * Where the query's terms (not the excluded ones) occur in a message: every occurrence of each
 * pattern at consecutive positions, as spans from the first matched token to the last. A prefix
 * lexeme that matched a longer bigram covers only its own character. Spans that overlap or touch merge.
 */
export function highlightSpans(content: string, tokens: ContentToken[], patterns: SearchPattern[]): Span[] {
  if (!tokens.length || !patterns.length) return [];
  const atPos = new Map<number, ContentToken[]>();
  for (const t of tokens) {
    const list = atPos.get(t.pos);
    if (list) list.push(t);
    else atPos.set(t.pos, [t]);
  }
  const spans: [number, number][] = [];
  for (const pattern of patterns) {
    for (const first of atPos.keys()) {
      let start = Infinity;
      let end = -Infinity;
      const matched = pattern.every((p, j) => {
        const t = (atPos.get(first + j) ?? []).find((x) =>
          p.prefix ? x.lexeme.startsWith(p.lexeme) : x.lexeme === p.lexeme,
        );
        if (!t) return false;
        start = Math.min(start, t.start);
        end = Math.max(end, p.prefix && t.lexeme !== p.lexeme ? t.start + [...p.lexeme].length : t.end);
        return true;
      });
      if (matched) spans.push([start, end]);
    }
  }
  if (!spans.length) return [];
  const units = utf16Offsets(content);
  const at = (cp: number) => units[cp] ?? content.length;
  return merge(spans).map(([s, e]) => [at(s), at(e)]);
}

function merge(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else out.push([s[0], s[1]]);
  }
  return out;
}

/** UTF-16 offset of each code point offset (the database counts code points, JavaScript indexes UTF-16 units). */
function utf16Offsets(content: string): number[] {
  const units = [0];
  let at = 0;
  for (const ch of content) units.push((at += ch.length));
  return units;
}
