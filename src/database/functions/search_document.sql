-- search_tokens() as a tsvector with positions: the generated column messages.search_doc. The call names
-- the schema ({{schema}}): a generated column runs under the writer's search_path (pg_restore: an empty one).
CREATE OR REPLACE FUNCTION search_document(doc text)
 RETURNS tsvector
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
      BEGIN
        RETURN (
          SELECT coalesce(string_agg('''' || replace(replace(t.lexeme, '\', '\\'), '''', '''''') || ''':' || t.pos, ' '), '')::tsvector
            FROM {{schema}}.search_tokens(doc) AS t);
      END
      $function$;
