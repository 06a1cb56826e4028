import { summarizePage } from './preview-parser';

describe('summarizePage (CONTRACT §26)', () => {
  it('takes OpenGraph first, decodes entities and resolves a relative image against the page', () => {
    const html =
      '<!doctype html><html><head><meta property="og:title" content="Rel &quot;x&quot;">' +
      '<meta property="og:description" content="  a\n\n  b ">' +
      '<meta property="og:image" content="/img/a.png"><meta property="og:site_name" content="Site">' +
      '<title>fallback</title></head><body>hi</body></html>';
    expect(summarizePage(html, 'http://h:1/p/q')).toEqual({
      title: 'Rel "x"',
      description: 'a b',
      image_url: 'http://h:1/img/a.png',
      site_name: 'Site',
    });
  });

  it('falls back to <title> and meta description; whitespace collapsed', () => {
    const html =
      '<html><head><title>  Plain &amp;\n Simple </title><meta name="description" content="Just a page"></head><body></body></html>';
    expect(summarizePage(html, 'http://x/')).toEqual({
      title: 'Plain & Simple',
      description: 'Just a page',
      image_url: null,
      site_name: null,
    });
  });

  it('is null without a title, ignores what the body holds, refuses images that are not http(s), and cuts long fields', () => {
    expect(summarizePage('<html><body><title>in the body</title></body></html>', 'http://x/')).toBeNull();
    expect(
      summarizePage('<meta property="og:image" content="javascript:alert(1)"><title>t</title>', 'http://x/')
        ?.image_url,
    ).toBeNull();
    const long = summarizePage(
      `<title>${'é'.repeat(400)}</title><meta name="description" content="${'d'.repeat(1200)}">`,
      'http://x/',
    );
    expect([[...long!.title].length, long!.description!.length]).toEqual([300, 1000]);
  });
});
