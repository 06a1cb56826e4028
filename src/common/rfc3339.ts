const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

export interface Instant {
  /** UTC with microseconds, which PostgreSQL reads back exactly. */
  utc: string;
  /** The precision it was written with, in microseconds: 1000 for `.123Z`, 1000000 for `:00Z`. */
  unitMicros: number;
}

/**
 * An RFC 3339 time, or null when the value is not a real instant (`2021-02-31`, `24:00:00`, year 0):
 * checked here, so the database is never handed a time it would refuse (that would be a 500, not a
 * 400). Digits past the microsecond are cut, as PostgreSQL keeps no more.
 */
export function parseRfc3339(value: string): Instant | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (day > new Date(Date.UTC(2000, month, 0)).getUTCDate() || (month === 2 && day === 29 && !isLeap(year)))
    return null;
  let offsetMinutes = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute - offsetMinutes, second, 0);
  const utcYear = t.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return null;
  const fraction = (m[7] ?? '').slice(0, 6);
  return {
    utc: `${t.toISOString().slice(0, 19)}.${fraction.padEnd(6, '0')}Z`,
    unitMicros: 10 ** (6 - fraction.length),
  };
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
