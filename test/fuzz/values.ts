import fc from 'fast-check';
import { Ref, ref, RefName } from './world';

/** A JSON number written verbatim: `1e999` parses as Infinity, `1e2` as an integer written oddly. */
export class RawNumber {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return this.text;
  }
}

/** A value as generated: JSON, with `Ref`s to real resources and `RawNumber`s inside. */
export type Gen = unknown;

const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

/** Strings no field should choke on: NUL, lone surrogates, control and bidi characters, injection, huge. */
export const hostileString = (maxHuge = 300_000): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfff',
      '\udc00\ud800',
      '%00',
      '%',
      '..',
      '../../etc/passwd',
      "' OR '1'='1",
      '\\',
      '\u202e',
      '😀',
      'null',
      'NaN',
      '-1',
      '1e999',
      '[]',
      '{}',
      '__proto__',
      '\r\n',
      '\t',
      '\uFEFF',
      '\u200b',
      'İ',
      '00000000-0000-0000-0000-000000000000',
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    ),
    fc.tuple(fc.string({ maxLength: 6 }), lone, fc.string({ maxLength: 6 })).map(([a, b, c]) => a + b + c),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }),
    fc.constantFrom(129, 501, 2049, 5_000, maxHuge).map((n) => 'x'.repeat(n)),
  );

const hostileNumber: fc.Arbitrary<Gen> = fc.oneof(
  fc.constantFrom(-1, 0, 0.5, 1.5, -0.000001, 2 ** 31, 2 ** 53 + 2, 1e21, 1e308, -1e308),
  fc
    .constantFrom('1e999', '-1e999', '1e2', '1.0', '123456789012345678901234567890', '-0')
    .map((t) => new RawNumber(t)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Arrays in arrays (or objects in objects) `depth` levels deep, around the 32-level limit and far past it. */
const nested = (depth: number, leaf: Gen, asObject: boolean): Gen => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asObject ? { a: v } : [v];
  return v;
};

const deep: fc.Arbitrary<Gen> = fc
  .tuple(fc.constantFrom(2, 31, 33, 64, 500), fc.boolean())
  .map(([d, asObject]) => nested(d, 'x', asObject));

/** Anything a field must refuse cleanly: wrong types, nesting, hostile strings and keys, null. */
export const hostileValue: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 4, arbitrary: hostileString() },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constantFrom<Gen>(null, [], {}, [[]], [null], [{}], { '': '' }) },
  { weight: 1, arbitrary: deep },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(hostileString(600), { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('\u0000', 'k\ud800', '__proto__', 'constructor', '', 'x'.repeat(300)),
        fc.jsonValue({ maxDepth: 1 }),
      )
      .map(([k, v]) => JSON.parse(`{${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}}`) as Gen),
  },
);

export const uuidLike: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => u.slice(0, -1)),
  fc.uuid().map((u) => `${u}0`),
);

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Times shaped like the service's cursors and RFC 3339, real ones and impossible ones (Feb 30th, 25:61). */
export const timeLike: fc.Arbitrary<string> = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc
    .date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) })
    .map((d) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')),
  fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 19 }),
      fc.integer({ min: 0, max: 39 }),
      fc.integer({ min: 0, max: 29 }),
      fc.integer({ min: 0, max: 69 }),
      fc.integer({ min: 0, max: 69 }),
      fc.integer({ min: 0, max: 999999 }),
      fc.constantFrom('Z', '+25:00', '-00:00', '+05:30', 'z'),
    )
    .map(
      ([y, mo, d, h, mi, s, us, tz]) =>
        `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(us, 6)}${tz}`,
    ),
  fc.constantFrom(
    '0000-01-01T00:00:00.000000Z',
    '9999-12-31T23:59:59.999999Z',
    '2026-02-29T00:00:00Z',
    'infinity',
    '-infinity',
    'epoch',
    'now',
    'allballs',
  ),
);

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url');

/** Opaque keyset cursors: garbage, and crafted ones of every shape the decoders accept or almost accept. */
export const cursorLike: fc.Arbitrary<Gen> = fc.oneof(
  fc.constantFrom('x', '', '====', 'eyJ9', b64([]), b64({}), b64([null, null])),
  fc.jsonValue({ maxDepth: 2 }).map(b64),
  fc.tuple(timeLike, fc.oneof(uuidLike, hostileString(600))).map(b64),
  fc.tuple(fc.oneof(uuidLike, hostileString(600))).map(b64),
  fc.tuple(fc.integer(), fc.oneof(uuidLike, fc.integer())).map(b64),
  fc.tuple(fc.double(), timeLike, uuidLike).map(b64),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => Buffer.from(s).toString('base64url')),
  hostileString(5_000),
);

const users: fc.Arbitrary<Gen> = fc.constantFrom(
  ref('user.ana'),
  ref('user.bo'),
  ref('user.cy'),
  ref('user.dee'),
);
export const userOrNot: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 5, arbitrary: users },
  {
    weight: 1,
    arbitrary: fc.constantFrom('nobody', 'gone-1', 'a'.repeat(128), 'a'.repeat(129), 'ünï-códe', 'x/y'),
  },
);
export const refs = (...names: RefName[]): fc.Arbitrary<Gen> =>
  fc.constantFrom(...names.map((n) => new Ref(n)));
