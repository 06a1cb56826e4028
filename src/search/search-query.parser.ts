/**
 * The syntax of `q` (SPEC.md "Search query syntax", CONTRACT §8), parsed into clauses. Words are not
 * normalised here: the database's tokenizer (`search_tokens`, the same one that builds the index)
 * turns each term into lexemes, so the query and the index can never disagree on case, punctuation or
 * scripts without spaces.
 *
 * - Terms are separated by whitespace; every clause must match (AND).
 * - `"exact phrase"`: the words in that order, adjacent. An unclosed quote runs to the end of `q`.
 * - `a OR b`: either. `OR` is an operator only in capitals and only between two terms that are not
 *   excluded; anywhere else it is ignored (search for the word with `or` or `"OR"`).
 * - `-term`, `-"a phrase"`: excluded. A `-` inside a term (`e-mail`) is punctuation.
 * - A bare term with punctuation inside (`e-mail`, `foo.bar`) is a phrase of its words, as it reads.
 */
export interface SearchTerm {
  /** The raw text of the word or phrase, before tokenization. */
  text: string;
}

export interface SearchClause {
  /** The clause matches when any of its terms does (one term unless OR joined several). */
  terms: SearchTerm[];
  /** An excluded clause: messages matching it are left out. Always a single term. */
  negated: boolean;
}

export interface ParsedQuery {
  clauses: SearchClause[];
}

interface Item {
  text: string;
  negated: boolean;
  /** a bare `OR`, which may turn out to be the operator */
  or: boolean;
}

/** Whitespace of any script (JavaScript's \s covers the Unicode spaces, U+3000 included). */
const SPACE = /\s/u;

function lex(q: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  while (i < q.length) {
    if (SPACE.test(q[i]!)) {
      i++;
      continue;
    }
    let negated = false;
    if (q[i] === '-' && i + 1 < q.length && !SPACE.test(q[i + 1]!)) {
      negated = true;
      i++;
    }
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      const end = close === -1 ? q.length : close;
      items.push({ text: q.slice(i + 1, end), negated, or: false });
      i = end + 1;
      continue;
    }
    let end = i;
    // a bare term ends at whitespace or at the quote that opens a phrase
    while (end < q.length && !SPACE.test(q[end]!) && q[end] !== '"') end++;
    const text = q.slice(i, end);
    items.push({ text, negated, or: !negated && text === 'OR' });
    i = end;
  }
  return items;
}

export function parseSearchQuery(q: string): ParsedQuery {
  const items = lex(q);
  const clauses: SearchClause[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.or) continue; // an OR that no term before it claimed: dangling, ignored
    if (item.negated) {
      clauses.push({ terms: [{ text: item.text }], negated: true });
      continue;
    }
    const clause: SearchClause = { terms: [{ text: item.text }], negated: false };
    // absorb `OR term` pairs while the term after the OR is a positive one
    while (i + 2 < items.length && items[i + 1]!.or && !items[i + 2]!.or && !items[i + 2]!.negated) {
      clause.terms.push({ text: items[i + 2]!.text });
      i += 2;
    }
    clauses.push(clause);
  }
  return { clauses };
}

/** Every term of the query in order, the unit the database tokenizes. */
export function termsOf(parsed: ParsedQuery): SearchTerm[] {
  return parsed.clauses.flatMap((c) => c.terms);
}
