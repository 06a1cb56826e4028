import { CountryCode, findPhoneNumbersInText } from 'libphonenumber-js/max';
import type { Span } from './fold';

/**
 * Countries whose national format we recognise without a `+` prefix. International numbers (`+44 …`,
 * `0044 …`) of every country are found whichever default is used. `trunk`: the national prefix people
 * always write in that country (`020 7946 0958`); a digit run without it is not a local number there, so
 * "order 123456789" is not read as a French number nor "20261121" as a German one. NANP numbers
 * (`(415) 555-2671`) are written without their optional `1`.
 */
const NATIONAL_FORMATS: { country: CountryCode; trunk: string | null }[] = [
  { country: 'US', trunk: null },
  { country: 'GB', trunk: '0' },
  { country: 'DE', trunk: '0' },
  { country: 'FR', trunk: '0' },
  { country: 'NL', trunk: '0' },
  { country: 'AU', trunk: '0' },
];

const INTERNATIONAL = /^\s*(?:\+|00|011)/;
/** 2026-11-21, 21.11.2026, 11/21/26: dates that happen to be valid numbers somewhere. */
const DATE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./](?:\d{4}|\d{2}))$/;
/** No country's numbers are shorter (country code included) in the formats we look for. */
const MIN_DIGITS = 7;
/** A digit group starting with a national trunk prefix `0` (and not part of `+…`/`00…`, checked later). */
const TRUNK_GROUP = /(?:^|[^\d])\(?0\d/;
/** "#123456789", "№ 0123": reference numbers, not phones. */
const REFERENCE_MARK = /[#№]\s*$/u;

/**
 * The `phone` rule: numbers that libphonenumber-js (full metadata) finds and validates as real numbers
 * of their country, so prices, order numbers, dates, times, versions and card numbers pass.
 */
export function findPhoneNumbers(content: string): Span[] {
  // each scan costs about a millisecond per 250 characters: skip the ones that cannot find anything
  if ((content.match(/\d/g)?.length ?? 0) < MIN_DIGITS) return [];
  const hasTrunk = TRUNK_GROUP.test(content);
  const found = new Map<string, Span>();
  for (const { country, trunk } of NATIONAL_FORMATS) {
    if (trunk !== null && !hasTrunk) continue;
    for (const n of findPhoneNumbersInText(content, { defaultCountry: country })) {
      const raw = content.slice(n.startsAt, n.endsAt);
      if (DATE.test(raw) || REFERENCE_MARK.test(content.slice(Math.max(0, n.startsAt - 3), n.startsAt)))
        continue;
      if (trunk !== null && !INTERNATIONAL.test(raw) && /\d/.exec(raw)?.[0] !== trunk) continue;
      found.set(`${n.startsAt}:${n.endsAt}`, { start: n.startsAt, end: n.endsAt });
    }
  }
  return [...found.values()];
}
