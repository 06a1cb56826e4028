-- search_tokens() as a tsvector with positions: a message's search document (chat_search_doc). The call
-- names the schema ({{schema}}): it may run under the writer's search_path (pg_restore: an empty one).
--
-- Most messages are short plain ASCII. For those, search_tokens' words are the runs of [0-9A-Za-z] and
-- PostgreSQL's own parser finds exactly them once every other character is a space, at a fifth of the
-- cost. They are lowercased first in the C collation, as search_tokens does in its Unicode one (the
-- 'simple' dictionary lowercases by the database's locale: a Turkish one would make 'I' 'ı'). Where
-- the two would differ, the long way is taken: a digit, 'e', digit (the parser reads '9e3a' as the
-- number '9e3' and the word 'a'); a word over 100 characters (search_tokens cuts it); 256 words or more
-- (the parser keeps 255 positions of a lexeme, the tsvector cast 256), which 510 bytes cannot hold.
-- test/search/search-document.e2e-spec.ts compares both ways on generated text.
CREATE OR REPLACE FUNCTION search_document(doc text)
 RETURNS tsvector
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
      BEGIN
        IF octet_length(doc) < 511 AND doc ~ '^[\x01-\x7F]*$' AND doc !~ '[0-9][Ee][0-9]|[0-9A-Za-z]{101}' THEN
          RETURN to_tsvector('pg_catalog.simple', lower(regexp_replace(doc, '[^0-9A-Za-z]+', ' ', 'g') COLLATE "C"));
        END IF;
        RETURN (
          SELECT coalesce(string_agg('''' || replace(replace(t.lexeme, '\', '\\'), '''', '''''') || ''':' || t.pos, ' '), '')::tsvector
            FROM {{schema}}.search_tokens(doc) AS t);
      END
      $function$;
