import { maskSpans } from './spans';
import { findProfanity, WordMatcher } from './profanity';
import { foldWithMap } from './fold';

const mask = (text: string, blocklist: string[] = []) => maskSpans(text, findProfanity(text, blocklist));

describe('profanity rule', () => {
  it('masks built-in words, whole words only, case-insensitively', () => {
    expect(mask('what the fuck is this')).toBe('what the *** is this');
    expect(mask('WHAT THE FUCK')).toBe('WHAT THE ***');
    expect(mask('Fucking hell, shit!')).toBe('*** hell, ***!');
    expect(mask('(shit)')).toBe('(***)');
    expect(mask('fuck_you')).toBe('***_you');
  });

  it.each([
    'Scunthorpe United won',
    'a classic assassin from Essex',
    'Middlesex and Sussex',
    'the cockpit of the shuttlecock',
    'cumulative passive assessment',
    'Shitake is spelled shiitake',
    'grape juice with a glass of bass',
    'café con leche, pot of tea, del mar',
    'Penistone and Arsenal',
    'hello world',
  ])('lets %p through', (text) => {
    expect(findProfanity(text)).toEqual([]);
  });

  it('covers several languages, with their inflections and letters', () => {
    expect(mask('Das ist SCHEISSE und scheiße')).toBe('Das ist *** und ***');
    expect(mask('quelle merde, putain')).toBe('quelle ***, ***');
    expect(mask('¡qué coño, cabrón!')).toBe('¡qué ***, ***!');
    expect(mask('che cazzo dici, stronzo')).toBe('che *** dici, ***');
    expect(mask('caralho, foda-se')).toBe('***, ***');
    expect(mask('kurwa mać')).toBe('*** mać');
    expect(mask('Ну ты и СУКА')).toBe('Ну ты и ***');
    expect(mask('klootzak!')).toBe('***!');
    expect(mask('siktir git')).toBe('*** git');
  });

  it('folds compatibility forms (full-width letters) and keeps the original offsets', () => {
    expect(mask('ｆｕｃｋ off')).toBe('*** off');
    expect(mask('emoji 🎉 then fuck 🎉')).toBe('emoji 🎉 then *** 🎉');
  });

  it('treats letters of every script as word characters', () => {
    expect(findProfanity('сукаблин')).toEqual([]);
    expect(findProfanity('fuckéd')).toEqual([]);
    expect(findProfanity('ﬁfuck')).toEqual([]);
  });

  it('applies the workspace blocklist, whole words, case-insensitively, phrases across separators', () => {
    expect(mask('you are a zorblax today', ['zorblax'])).toBe('you are a *** today');
    expect(mask('the zorblaxian fleet near Scunthorpe', ['zorblax'])).toBe(
      'the zorblaxian fleet near Scunthorpe',
    );
    expect(mask('zorblaxian and ZORBLAX', ['Zorblax'])).toBe('zorblaxian and ***');
    expect(mask('a Bad  Word here, bad-word there', ['bad word'])).toBe('a *** here, *** there');
    expect(mask('Straße und STRASSE', ['strasse'])).toBe('*** und ***');
  });

  it('matches blocklist entries of scripts written without spaces inside a sentence', () => {
    expect(mask('你是笨蛋吗', ['笨蛋'])).toBe('你是***吗');
    expect(mask('これはバカです', ['バカ'])).toBe('これは***です');
  });

  it('prefers the longer entry at the same position', () => {
    const m = new WordMatcher(['bad', 'bad word']);
    const text = 'a bad word';
    expect(m.find(foldWithMap(text))).toEqual([{ start: 2, end: 10 }]);
  });
});
