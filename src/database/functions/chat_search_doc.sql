-- A message's search document, as message_search holds it: the tokens of its content (search_document)
-- and its channel's own lexeme '#<channel id>', which a channel's search intersects with its terms.
-- Written off the send's commit path by the search indexer (src/search/search-indexer.ts), rewritten by
-- an edit, and computed at query time for the messages the indexer has not reached yet.
CREATE OR REPLACE FUNCTION chat_search_doc(content text, channel_id uuid)
 RETURNS tsvector
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT {{schema}}.search_document(content) || array_to_tsvector(ARRAY['#' || channel_id::text])
$function$;
