import type { ParsedQuery } from './search-query.parser';

/** One token of `search_tokens()`: a word (w), a bigram of a script without spaces (b) or its unigram (u). */
export interface SearchToken {
  pos: number;
  lexeme: string;
  kind: 'w' | 'b' | 'u';
}

/** A term as lexemes that must sit at consecutive positions; a prefix lexeme matches any lexeme it starts. */
export type SearchPattern = { lexeme: string; prefix: boolean }[];

export interface CompiledQuery {
  /** tsquery text for `::tsquery`, or null when the query has no searchable words at all. */
  tsquery: string | null;
  /** The terms that are not excluded, for highlighting. */
  patterns: SearchPattern[];
  /** Every searchable term is excluded: there is nothing to rank by, and no index can serve it. */
  onlyExcluded: boolean;
}

/**
 * A term's tokens as a pattern: one lexeme per position. At a position holding both a bigram and the
 * run's trailing unigram the bigram is the stricter of the two; a lone unigram (a one-character run)
 * becomes a prefix, so it also finds that character at the start of a longer run.
 */
export function patternOf(tokens: SearchToken[]): SearchPattern {
  const byPos = new Map<number, SearchToken>();
  for (const t of [...tokens].sort((a, b) => a.pos - b.pos)) {
    const seen = byPos.get(t.pos);
    if (!seen || (seen.kind === 'u' && t.kind === 'b')) byPos.set(t.pos, t);
  }
  return [...byPos.values()].map((t) => ({ lexeme: t.lexeme, prefix: t.kind === 'u' }));
}

/** A lexeme as a tsquery operand. Lexemes never hold quotes or backslashes (both are separators), but escape anyway. */
function operand(p: SearchPattern[number]): string {
  return `'${p.lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'${p.prefix ? ':*' : ''}`;
}

function phrase(pattern: SearchPattern): string {
  const ops = pattern.map(operand);
  return ops.length === 1 ? ops[0]! : `(${ops.join(' <-> ')})`;
}

/**
 * The parsed query, with each term's tokens (in term order, as `termsOf` lists them), as one tsquery.
 * Terms without any word (punctuation only) drop out, and so do clauses left empty.
 */
export function compileQuery(parsed: ParsedQuery, tokensPerTerm: SearchToken[][]): CompiledQuery {
  const parts: string[] = [];
  const patterns: SearchPattern[] = [];
  let excluded = 0;
  let k = 0;
  for (const clause of parsed.clauses) {
    const alternatives: SearchPattern[] = [];
    for (let i = 0; i < clause.terms.length; i++) {
      const pattern = patternOf(tokensPerTerm[k++] ?? []);
      if (pattern.length) alternatives.push(pattern);
    }
    if (!alternatives.length) continue;
    if (clause.negated) {
      parts.push(`!${phrase(alternatives[0]!)}`);
      excluded++;
    } else {
      patterns.push(...alternatives);
      parts.push(
        alternatives.length === 1 ? phrase(alternatives[0]!) : `(${alternatives.map(phrase).join(' | ')})`,
      );
    }
  }
  if (!parts.length) return { tsquery: null, patterns, onlyExcluded: false };
  return { tsquery: parts.join(' & '), patterns, onlyExcluded: excluded === parts.length };
}
