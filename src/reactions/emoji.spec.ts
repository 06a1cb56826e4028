import { isReactionEmoji } from './emoji';

describe('isReactionEmoji', () => {
  it.each(['👍', '👍🏽', '👨‍👩‍👧', '🇫🇷', '❤️', '❤', '1️⃣', ':+1:', ':party_parrot:', `:${'a'.repeat(62)}:`])(
    'accepts %s',
    (e) => {
      expect(isReactionEmoji(e)).toBe(true);
    },
  );

  it.each([
    '',
    'a',
    'ok',
    '👍👍',
    '👍 ',
    ':no spaces:',
    '::',
    `:${'a'.repeat(63)}:`,
    'x'.repeat(65),
    '1',
    '#',
  ])('refuses %j', (e) => {
    expect(isReactionEmoji(e)).toBe(false);
  });

  it('refuses non-strings', () => {
    for (const v of [undefined, null, 1, ['👍'], { emoji: '👍' }]) expect(isReactionEmoji(v)).toBe(false);
  });
});
