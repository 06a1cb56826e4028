import { LinkifyIt } from 'linkify-it';
import type { Span } from './fold';

/**
 * Generic top-level domains common in links people paste (and in spam) beyond linkify-it's own list,
 * which already has every two-letter country code (so `bit.ly`, `t.me`, `x.io`) and com, net, org, info,
 * biz, edu, gov, shop, рф… File-like suffixes (zip, mov) stay out, so "notes.zip" is not a link.
 */
// prettier-ignore
const EXTRA_TLDS = [
  'app', 'dev', 'xyz', 'top', 'online', 'site', 'club', 'store', 'live', 'link', 'tech', 'cloud', 'blog', 'page',
  'art', 'icu', 'click', 'website', 'space', 'fun', 'life', 'world', 'today', 'news', 'email', 'chat', 'social',
  'media', 'group', 'digital', 'agency', 'design', 'studio', 'network', 'company', 'services', 'support', 'host',
];

/**
 * URLs with a scheme (`https://…`, `ftp://…`, `//…`), schemeless ones whose host ends in a known
 * top-level domain (`example.com/x`, `www.example.org`) and e-mail addresses (linkify-it reads them as
 * `mailto:` links: an address is as much an off-platform contact as a URL, and a workspace that turns
 * the rule on usually wants both gone). Version numbers, decimals and `node.js`-style names are not links.
 */
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: false }).tlds(EXTRA_TLDS, true);

/** The `link` rule. */
export function findLinks(content: string): Span[] {
  if (!linkify.test(content)) return [];
  return (linkify.match(content) ?? []).map((m) => ({ start: m.index, end: m.lastIndex }));
}
