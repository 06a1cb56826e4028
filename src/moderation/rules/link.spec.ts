import { findLinks } from './link';
import { maskSpans } from './spans';

const mask = (text: string) => maskSpans(text, findLinks(text));

describe('link rule', () => {
  it.each([
    ['visit https://example.com/deal now', 'visit *** now'],
    ['see example.com/x', 'see ***'],
    ['www.example.org', '***'],
    ['short: bit.ly/abc and t.me/chan', 'short: *** and ***'],
    ['EXAMPLE.COM', '***'],
    ['ftp://files.example.net/a.zip', '***'],
    ['go to foo.app/x', 'go to ***'],
    ['пишите на пример.рф', 'пишите на ***'],
  ])('finds %p', (text, masked) => {
    expect(mask(text)).toBe(masked);
  });

  it('counts an e-mail address as a link', () => {
    expect(mask('mail me at bob@example.com')).toBe('mail me at ***');
  });

  it.each([
    'version 1.2.3',
    '$1,299.99',
    'node.js and vue.js',
    'e.g. this, i.e. that',
    'done.Now what',
    'at 10.30 tomorrow',
    'notes.zip is attached',
    'no links here',
  ])('lets %p through', (text) => {
    expect(findLinks(text)).toEqual([]);
  });
});
