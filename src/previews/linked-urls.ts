/** CONTRACT §26: the longest URL a preview is made of. */
export const MAX_PREVIEW_URL = 2048;
/** CONTRACT §26: at most this many links of a message are previewed. */
export const MAX_PREVIEWS = 3;

/** A run of text from `http://` or `https://` to the next space, quote or angle bracket. */
const LINK = /https?:\/\/[^\s<>"'`]+/giu;
/** What a sentence puts after a link, not part of it. */
const TRAILING = /[.,;:!?)]+$/u;

/**
 * The links of a message's content that get previews (CONTRACT §26): the first MAX_PREVIEWS distinct
 * http(s) URLs in order of appearance, each with trailing `.,;:!?)` trimmed, as written (the preview's
 * `url`). A candidate that is not an absolute URL with a host, or is longer than a preview URL may be,
 * is passed over.
 */
export function linkedUrls(content: string): string[] {
  const found: string[] = [];
  for (const [match] of content.matchAll(LINK)) {
    const url = match.replace(TRAILING, '');
    if (found.includes(url) || !isFetchable(url)) continue;
    found.push(url);
    if (found.length === MAX_PREVIEWS) break;
  }
  return found;
}

function isFetchable(url: string): boolean {
  if (url.length > MAX_PREVIEW_URL) return false;
  try {
    return new URL(url).hostname !== '';
  } catch {
    return false;
  }
}
