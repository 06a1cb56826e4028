import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';

/** A small seeded generator, so a failure names a string that fails again. */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * search_document's fast path (plain ASCII through PostgreSQL's parser) gives exactly the document of
 * search_tokens, the tokenizer that query terms go through: otherwise a message would not be found by
 * its own words.
 */
describe('search_document', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(async () => t.close());

  it("makes the tokenizer's document of any text, by the fast path or not", async () => {
    const random = generator(24);
    const pick = (alphabet: string, n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const texts = [
      '',
      'Hello, world!',
      '9e3a 4e7G 1E10 e10 10e 1e-5 1e+5 0x1F',
      'ab '.repeat(300),
      'ab '.repeat(170),
      'x'.repeat(100),
      'x'.repeat(101) + ' y',
      'wörld café naïve',
      '東京で会いましょう ok',
      'mail ana@example.com, see https://example.com/a?b=c#d; 3.14 -7 +3 1/2',
      // the characters the parser treats specially, densely
      ...Array.from({ length: 1500 }, (_, i) => pick('0123456789eExXabcZ   .-+_,:/@#&<>\'"', 1 + (i % 120))),
      // any ASCII, up to past the fast path's length
      ...Array.from({ length: 400 }, (_, i) =>
        Array.from({ length: 1 + ((i * 37) % 530) }, () =>
          String.fromCharCode(1 + Math.floor(random() * 127)),
        ).join(''),
      ),
    ];
    const rows = await db.query<{ i: number; fast: string; tokens: string }[]>(
      `SELECT x.i, search_document(x.t)::text AS fast,
              (SELECT coalesce(string_agg('''' || replace(replace(k.lexeme, '\\', '\\\\'), '''', '''''') || ''':' || k.pos, ' '), '')::tsvector
                 FROM search_tokens(x.t) AS k)::text AS tokens
         FROM unnest($1::text[]) WITH ORDINALITY AS x(t, i)`,
      [texts],
    );
    expect(rows).toHaveLength(texts.length);
    const differing = rows.filter((r) => r.fast !== r.tokens).map((r) => ({ text: texts[r.i - 1], ...r }));
    expect(differing).toEqual([]);
    // and the documents are the words, not nothing
    expect(rows[1]).toMatchObject({ fast: `'hello':1 'world':2` });
    expect(rows[2]!.fast).toContain(`'9e3a':1`);
  });
});
