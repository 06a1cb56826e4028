import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Full-text search (docs/SEARCH.md): one tokenizer in SQL, used for the index, for query terms and for
 * highlights, so the three can never disagree.
 *
 * - `search_tokens(text)`: the text cut into runs of separators (whitespace, punctuation, symbols,
 *   emoji: explicit code point ranges, so the result never depends on the database's locale), runs of
 *   scripts written without spaces (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar, Yi) and runs of
 *   anything else (words of every other script). A word is one token, lower-cased. A run without
 *   spaces becomes its overlapping character bigrams, one position each, plus its last character as
 *   a unigram at the last position, so any substring of two or more characters is a phrase of bigrams
 *   and a single character is a prefix query. Each token carries its code point offsets.
 * - `search_document(text)`: those tokens as a tsvector with positions (for phrases), built directly
 *   rather than through a text search parser, which would re-split tokens by locale.
 * - `messages.search_doc`: a stored generated column (computed in the statement that writes the row,
 *   so edits re-index and unsends, which blank the content and set deleted_at, un-index), with a GIN
 *   index. Adding it rewrites the table, which is the backfill (about 2 minutes per million messages
 *   on the benchmark machine, under an exclusive lock).
 */
export class Search1763690400000 implements MigrationInterface {
  name = 'Search1763690400000';

  async up(q: QueryRunner): Promise<void> {
    // lower() follows the collation: pick one with Unicode case mapping whatever the database default
    const found = (await q.query(
      `SELECT collname FROM pg_collation WHERE collname IN ('pg_c_utf8', 'C.utf8', 'C.UTF-8') AND collencoding IN (-1, 6)`,
    )) as { collname: string }[];
    const collation = ['pg_c_utf8', 'C.utf8', 'C.UTF-8'].find((c) => found.some((r) => r.collname === c));
    const folded = (expr: string) => (collation ? `lower(${expr} COLLATE "${collation}")` : `lower(${expr})`);
    // a generated column's function runs under the writer's search_path (pg_restore: an empty one), so
    // the call between the two functions names the schema
    const schema = (await q.query(`SELECT quote_ident(current_schema()) AS s`)) as { s: string }[];

    const sep = `[${SEPARATORS}]`;
    const nospace = `[${NO_SPACE_SCRIPTS}]`;
    const word = `[^${SEPARATORS}${NO_SPACE_SCRIPTS}]`;
    // PL/pgSQL, not SQL: its plans are cached for the session, where a non-inlined SQL function is
    // planned again on every single-row INSERT; one regexp pass and a loop was the fastest form measured
    await q.query(`
      CREATE FUNCTION search_tokens(doc text)
      RETURNS TABLE (pos integer, lexeme text, kind "char", start_at integer, end_at integer)
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $fn$
      DECLARE
        m text[];
        at integer := 0;
        len integer;
        i integer;
      BEGIN
        pos := 0;
        -- each match: the separators before a run, then the run (no-space script, or a word)
        FOR m IN SELECT regexp_matches(doc, '(${sep}*)(?:(${nospace}+)|(${word}+))', 'g') LOOP
          at := at + char_length(m[1]);
          IF m[3] IS NOT NULL THEN
            len := char_length(m[3]);
            pos := pos + 1;
            lexeme := ${folded('left(m[3], 100)')};
            kind := 'w';
            start_at := at;
            end_at := at + len;
            RETURN NEXT;
          ELSE
            len := char_length(m[2]);
            kind := 'b';
            FOR i IN 1 .. len - 1 LOOP
              pos := pos + 1;
              lexeme := substr(m[2], i, 2);
              start_at := at + i - 1;
              end_at := at + i + 1;
              RETURN NEXT;
            END LOOP;
            IF len = 1 THEN
              pos := pos + 1;
            END IF;
            lexeme := substr(m[2], len, 1);
            kind := 'u';
            start_at := at + len - 1;
            end_at := at + len;
            RETURN NEXT;
          END IF;
          at := at + len;
        END LOOP;
      END
      $fn$`);

    // tsvector input clamps positions past 16383; lexemes cannot hold quotes or backslashes (both are
    // separators) but are escaped anyway
    await q.query(`
      CREATE FUNCTION search_document(doc text) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $fn$
      BEGIN
        RETURN (
          SELECT coalesce(string_agg('''' || replace(replace(t.lexeme, '\\', '\\\\'), '''', '''''') || ''':' || t.pos, ' '), '')::tsvector
            FROM ${schema[0]!.s}.search_tokens(doc) AS t);
      END
      $fn$`);

    // plus one lexeme naming the channel ('#' is a separator, so no word can collide with it): a search
    // within a channel adds it to the query, and the index intersects the terms with that channel's
    // postings instead of with every message that holds the words
    await q.query(`
      ALTER TABLE messages ADD COLUMN search_doc tsvector
        GENERATED ALWAYS AS (
          CASE WHEN deleted_at IS NULL THEN search_document(content) || array_to_tsvector(ARRAY['#' || channel_id::text]) END
        ) STORED`);
    // fastupdate off: every write updates the index itself. With the pending list on, each search also
    // scans every entry written since the last vacuum, and the planner prices the index by that list
    await q.query(`CREATE INDEX messages_search ON messages USING gin (search_doc) WITH (fastupdate = off)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX messages_search`);
    await q.query(`ALTER TABLE messages DROP COLUMN search_doc`);
    await q.query(`DROP FUNCTION search_document(text)`);
    await q.query(`DROP FUNCTION search_tokens(text)`);
  }
}

/** Code point ranges as a regex bracket body, `\\UXXXXXXXX` escapes (ARE character-entry escapes). */
function bracket(ranges: [number, number][]): string {
  const hex = (c: number) => `\\U${c.toString(16).toUpperCase().padStart(8, '0')}`;
  return ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');
}

/** Whitespace, punctuation, symbols and emoji of the common blocks: never part of a word. */
// prettier-ignore
const SEPARATORS = bracket([
  [0x0001, 0x002f], [0x003a, 0x0040], [0x005b, 0x0060], [0x007b, 0x00bf], [0x00d7, 0x00d7], [0x00f7, 0x00f7],
  [0x037e, 0x037e], [0x0387, 0x0387], [0x055a, 0x055f], [0x0589, 0x058a],
  [0x05be, 0x05be], [0x05c0, 0x05c0], [0x05c3, 0x05c3], [0x05c6, 0x05c6], [0x05f3, 0x05f4],
  [0x060c, 0x060d], [0x061b, 0x061b], [0x061d, 0x061f], [0x066a, 0x066d], [0x06d4, 0x06d4],
  [0x0964, 0x0965], [0x0970, 0x0970], [0x0e4f, 0x0e4f], [0x0e5a, 0x0e5b], [0x10fb, 0x10fb],
  [0x1360, 0x1368], [0x166d, 0x166e], [0x1680, 0x1680], [0x16eb, 0x16ed], [0x17d4, 0x17d6], [0x17d8, 0x17da],
  [0x1800, 0x180a], [0x180e, 0x180e],
  [0x2000, 0x206f], [0x20a0, 0x20ff], [0x2100, 0x214f], [0x2190, 0x27ff], [0x2900, 0x2bff], [0x2e00, 0x2e7f],
  [0x3000, 0x3004], [0x3008, 0x3020], [0x3030, 0x3030], [0x303d, 0x303f], [0x30fb, 0x30fb],
  [0xfe00, 0xfe0f], [0xfe10, 0xfe1f], [0xfe30, 0xfe6f], [0xfeff, 0xfeff],
  [0xff01, 0xff0f], [0xff1a, 0xff20], [0xff3b, 0xff40], [0xff5b, 0xff65], [0xfff0, 0xffff],
  [0x1f000, 0x1faff], [0x1fb00, 0x1fbff], [0xe0000, 0xe007f],
]);

/** Scripts written without spaces between words (and Hangul, whose words carry attached particles). */
// prettier-ignore
const NO_SPACE_SCRIPTS = bracket([
  [0x0e01, 0x0e4e], [0x0e50, 0x0e59], [0x0e80, 0x0eff], // Thai (less its punctuation), Lao
  [0x1000, 0x109f], [0x1100, 0x11ff], // Myanmar, Hangul Jamo
  [0x1780, 0x17d3], [0x17d7, 0x17d7], [0x17db, 0x17ff], [0x19e0, 0x19ff], // Khmer
  [0x2e80, 0x2fdf], // CJK radicals
  [0x3005, 0x3007], [0x3021, 0x3029], [0x3031, 0x3035], [0x3038, 0x303c], // CJK marks and numerals
  [0x3040, 0x30fa], [0x30fc, 0x30ff], // Hiragana, Katakana
  [0x3100, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf], // Bopomofo .. CJK, Yi
  [0xa960, 0xa97f], [0xac00, 0xd7ff], [0xf900, 0xfaff], [0xff66, 0xffdc], // Hangul, compatibility, half-width
  [0x16fe0, 0x16fff], [0x1b000, 0x1b16f], [0x20000, 0x3134f], // ideographic marks, kana supplement, CJK B..G
]);
