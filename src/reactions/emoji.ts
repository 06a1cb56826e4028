import { registerDecorator, ValidationArguments } from 'class-validator';

const SHORTCODE = /^:[A-Za-z0-9_+-]{1,62}:$/;
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
export const EMOJI_MAX_CHARS = 64;

/** CONTRACT §7: 1-64 characters, a single emoji (one grapheme cluster) or a `:shortcode:`. */
export function isReactionEmoji(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || [...value].length > EMOJI_MAX_CHARS) return false;
  if (SHORTCODE.test(value)) return true;
  let count = 0;
  for (const _ of graphemes.segment(value)) if (++count > 1) return false;
  return EMOJI.test(value);
}

export const EMOJI_RULE = `must be a single emoji or a :shortcode:, at most ${EMOJI_MAX_CHARS} characters`;

export function IsReactionEmoji() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isReactionEmoji',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => isReactionEmoji(value),
        defaultMessage: (a: ValidationArguments) => `${a.property} ${EMOJI_RULE}`,
      },
    });
}
