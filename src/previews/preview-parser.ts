import { Parser } from 'htmlparser2';

/** CONTRACT §26's preview of a page, less the URL it was written as. */
export interface PageSummary {
  title: string;
  description: string | null;
  image_url: string | null;
  site_name: string | null;
}

const MAX_TITLE = 300;
const MAX_DESCRIPTION = 1000;

/** Whitespace collapsed, trimmed, cut at `max` code points; null when nothing is left. */
function clean(value: string | undefined, max: number): string | null {
  if (value === undefined) return null;
  const text = [...value.replace(/\s+/g, ' ').trim()].slice(0, max).join('');
  return text || null;
}

/**
 * The preview of an HTML page (htmlparser2, entities decoded): `og:title` or else `<title>`,
 * `og:description` or else `<meta name="description">`, `og:image` resolved against the page's URL
 * (http or https only), `og:site_name`. Null without a title. The first of each wins; the parser stops
 * reading at `<body>`, where none of them are.
 */
export function summarizePage(html: string, pageUrl: string): PageSummary | null {
  const og: Record<string, string> = {};
  let description: string | undefined;
  let title: string | undefined;
  let inTitle = false;
  let titleText = '';
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'body') return parser.pause();
        if (name === 'title' && title === undefined) {
          inTitle = true;
          titleText = '';
        }
        if (name !== 'meta') return;
        const key = (attrs.property ?? attrs.name ?? '').toLowerCase();
        const content = attrs.content;
        if (content === undefined) return;
        if (key.startsWith('og:') && og[key] === undefined) og[key] = content;
        else if (key === 'description' && description === undefined) description = content;
      },
      ontext(text) {
        if (inTitle) titleText += text;
      },
      onclosetag(name) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          title = titleText;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const finalTitle = clean(og['og:title'], MAX_TITLE) ?? clean(title, MAX_TITLE);
  if (!finalTitle) return null;
  return {
    title: finalTitle,
    description: clean(og['og:description'], MAX_DESCRIPTION) ?? clean(description, MAX_DESCRIPTION),
    image_url: imageUrl(og['og:image'], pageUrl),
    site_name: clean(og['og:site_name'], MAX_TITLE),
  };
}

function imageUrl(value: string | undefined, pageUrl: string): string | null {
  if (!value?.trim()) return null;
  try {
    const url = new URL(value.trim(), pageUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}
