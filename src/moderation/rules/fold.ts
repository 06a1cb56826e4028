/**
 * Text folding for matching: NFKC (full-width letters, ligatures and other compatibility forms become
 * their plain letters) and case folding, with a map back to the original text so that a match found
 * in the folded text can be masked in the original.
 */
export interface FoldedText {
  /** The folded text that rules match against. */
  text: string;
  /** For each UTF-16 index of `text`: where its source cluster starts in the original. */
  starts: number[];
  /** For each UTF-16 index of `text`: where its source cluster ends in the original. */
  ends: number[];
}

/** A base character with its combining marks (or a run of stray marks): the unit NFKC composes. */
const CLUSTER = /\P{M}\p{M}*|\p{M}+/gu;

/**
 * One cluster, folded. Upper then lower case approximates Unicode full case folding where JavaScript
 * has no such call: ß → SS → ss, ς → Σ → σ, ſ → S → s, so "SCHEISSE" and "scheiße" fold alike.
 * Clusters are folded one by one, never the whole string, so that context-sensitive mappings (final
 * sigma) cannot make the same word fold differently in a list and in a message.
 */
function foldCluster(cluster: string): string {
  return cluster.normalize('NFKC').toUpperCase().toLowerCase();
}

export function foldWithMap(original: string): FoldedText {
  let text = '';
  const starts: number[] = [];
  const ends: number[] = [];
  for (const m of original.matchAll(CLUSTER)) {
    const start = m.index;
    const end = start + m[0].length;
    const folded = foldCluster(m[0]);
    text += folded;
    for (let i = 0; i < folded.length; i++) {
      starts.push(start);
      ends.push(end);
    }
  }
  return { text, starts, ends };
}

/** The folded form alone (word lists, flood keys). */
export function fold(s: string): string {
  return foldWithMap(s).text;
}

/** A match [start, end) in folded text, as a span of the original text. */
export function toOriginal(f: FoldedText, start: number, end: number): Span {
  return { start: f.starts[start]!, end: f.ends[end - 1]! };
}

/** A half-open range [start, end) of UTF-16 indices into a message's content. */
export interface Span {
  start: number;
  end: number;
}
