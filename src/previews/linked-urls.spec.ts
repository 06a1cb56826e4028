import { linkedUrls } from './linked-urls';

describe('linkedUrls (CONTRACT §26)', () => {
  it('takes the first 3 distinct http(s) links in order, trailing punctuation trimmed', () => {
    expect(
      linkedUrls(
        'see https://a.example/x, then (http://b.example/y?q=1). Also https://a.example/x! and HTTPS://c.example; https://d.example',
      ),
    ).toEqual(['https://a.example/x', 'http://b.example/y?q=1', 'HTTPS://c.example']);
  });

  it('passes over what is not a link with a host, or is too long', () => {
    expect(linkedUrls('ftp://a.example/x http:// https://?x mailto:x@y.z')).toEqual([]);
    expect(linkedUrls(`https://a.example/${'a'.repeat(2048)} https://b.example`)).toEqual([
      'https://b.example',
    ]);
    expect(linkedUrls('<https://a.example/x>"https://b.example/y"')).toEqual([
      'https://a.example/x',
      'https://b.example/y',
    ]);
  });
});
