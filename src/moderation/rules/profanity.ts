import { fold, FoldedText, foldWithMap, Span, toOriginal } from './fold';
import { PROFANITY_WORDLIST } from './profanity-wordlist';

const WORD_CHAR = '[\\p{L}\\p{N}\\p{M}]';
const NOT_WORD_CHAR = '[^\\p{L}\\p{N}\\p{M}]';
const SEPARATORS = /[^\p{L}\p{N}\p{M}]+/u;
/**
 * Scripts written without spaces between words: a whole-word match would never fire inside a sentence,
 * so entries made only of these letters match anywhere.
 */
const UNSPACED =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{M}\u30fc]+$/u;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whole-word matching of a word list, Unicode-aware: a word boundary is any character that is not a
 * letter, digit or combining mark of any script, so "Scunthorpe", "classic" and "Essex" never match.
 * Entries of several words ("hijo de puta", "foda-se") match across any run of separators.
 */
export class WordMatcher {
  private readonly spaced: RegExp | null;
  private readonly unspaced: RegExp | null;

  constructor(words: Iterable<string>) {
    const spaced = new Set<string>();
    const unspaced = new Set<string>();
    for (const word of words) {
      const parts = fold(word).split(SEPARATORS).filter(Boolean);
      if (!parts.length) continue;
      const pattern = parts.map(escape).join(`${NOT_WORD_CHAR}+`);
      (parts.length === 1 && UNSPACED.test(parts[0]!) ? unspaced : spaced).add(pattern);
    }
    // longest first, so that at one position the longer entry wins
    const alternation = (set: Set<string>) => [...set].sort((a, b) => b.length - a.length).join('|');
    this.spaced = spaced.size
      ? new RegExp(`(?<!${WORD_CHAR})(?:${alternation(spaced)})(?!${WORD_CHAR})`, 'gu')
      : null;
    this.unspaced = unspaced.size ? new RegExp(`(?:${alternation(unspaced)})`, 'gu') : null;
  }

  /** Matches in `folded`, as spans of the original text. */
  find(folded: FoldedText): Span[] {
    const out: Span[] = [];
    for (const re of [this.spaced, this.unspaced]) {
      if (!re) continue;
      for (const m of folded.text.matchAll(re)) {
        if (m[0].length) out.push(toOriginal(folded, m.index, m.index + m[0].length));
      }
    }
    return out;
  }
}

const BUILT_IN = new WordMatcher(Object.values(PROFANITY_WORDLIST).flat());

/** Compiled blocklists, most recently used last; a workspace's list changes rarely. */
const blocklists = new Map<string, WordMatcher>();
const MAX_CACHED_BLOCKLISTS = 500;

function blocklistMatcher(blocklist: readonly string[]): WordMatcher | null {
  if (!blocklist.length) return null;
  const key = JSON.stringify(blocklist);
  let matcher = blocklists.get(key);
  if (matcher) {
    blocklists.delete(key);
  } else {
    matcher = new WordMatcher(blocklist);
    if (blocklists.size >= MAX_CACHED_BLOCKLISTS) blocklists.delete(blocklists.keys().next().value!);
  }
  blocklists.set(key, matcher);
  return matcher;
}

/** The `profanity` rule: the built-in list plus the workspace's blocklist. */
export function findProfanity(content: string, blocklist: readonly string[] = []): Span[] {
  const folded = foldWithMap(content);
  return [...BUILT_IN.find(folded), ...(blocklistMatcher(blocklist)?.find(folded) ?? [])];
}
