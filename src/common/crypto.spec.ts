import { randomBytes } from 'crypto';
import { randomToken, safeEqual, SecretBox, sha256Hex } from './crypto';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips a secret', () => {
    for (const plain of ['sk_abc', '', 'ünïcødé 🔑', 'x'.repeat(10_000)])
      expect(box.open(box.seal(plain))).toBe(plain);
  });

  it('never produces the same envelope twice and never contains the plain text', () => {
    const a = box.seal('sk_secret_value');
    const b = box.seal('sk_secret_value');
    expect(a).not.toBe(b);
    expect(a.startsWith('v1:')).toBe(true);
    expect(a).not.toContain('sk_secret_value');
  });

  it('refuses a tampered envelope', () => {
    const [v, iv, tag, ct] = box.seal('sk_secret_value').split(':') as [string, string, string, string];
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64url')].join(':'))).toThrow();
    expect(() => box.open([v, iv, Buffer.alloc(16).toString('base64url'), ct].join(':'))).toThrow();
  });

  it('refuses an envelope sealed with another key', () => {
    const other = new SecretBox(randomBytes(32));
    expect(() => other.open(box.seal('sk_secret_value'))).toThrow();
  });

  it('refuses unknown envelopes and keys that are not 32 bytes', () => {
    expect(() => box.open('plain-text')).toThrow('unknown secret envelope');
    expect(() => box.open('v2:a:b:c')).toThrow('unknown secret envelope');
    expect(() => new SecretBox(randomBytes(16))).toThrow('32 bytes');
  });
});

describe('safeEqual', () => {
  it('compares strings of any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('', 'a')).toBe(false);
  });
});

describe('sha256Hex and randomToken', () => {
  it('hashes to 64 hex characters', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('makes prefixed url-safe tokens of the requested entropy', () => {
    const t = randomToken('sk_', 32);
    expect(t).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(randomToken('pk_', 12)).toMatch(/^pk_[A-Za-z0-9_-]{16}$/);
    expect(randomToken('sk_')).not.toBe(randomToken('sk_'));
  });
});
