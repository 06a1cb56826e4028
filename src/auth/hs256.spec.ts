import { createHmac } from 'crypto';
import { sign, verify } from 'jsonwebtoken';
import { checkTimeClaims, hmacKey, hs256SignatureOk, isCanonicalBase64url, parseJwt } from './hs256';

const SECRET = 'sk_test_secret_0123456789';
const key = hmacKey(SECRET);
const now = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const forge = (header: unknown, payload: unknown, secret: string | null = SECRET, alg = 'sha256') => {
  const input = `${b64(header)}.${b64(payload)}`;
  return secret === null
    ? `${input}.`
    : `${input}.${createHmac(alg, secret).update(input).digest('base64url')}`;
};
const valid = (token: string) => {
  const jwt = parseJwt(token);
  return (
    !!jwt && jwt.header.alg === 'HS256' && hs256SignatureOk(jwt, key) && checkTimeClaims(jwt.payload) === 'ok'
  );
};

describe('HS256 verification', () => {
  it('accepts what jsonwebtoken signs, header and payload decoded', () => {
    const iat = now();
    const token = sign({ sub: 'ana', iat, exp: iat + 60 }, SECRET, { algorithm: 'HS256', keyid: 'pk_a' });
    const jwt = parseJwt(token)!;
    expect(jwt.header).toEqual({ alg: 'HS256', typ: 'JWT', kid: 'pk_a' });
    expect(jwt.payload).toEqual({ sub: 'ana', iat, exp: iat + 60 });
    expect(hs256SignatureOk(jwt, key)).toBe(true);
    expect(valid(token)).toBe(true);
    // and jsonwebtoken accepts a token verified here with a KeyObject
    expect(verify(token, key, { algorithms: ['HS256'] })).toMatchObject({ sub: 'ana' });
  });

  it('refuses another secret, a tampered payload, a stripped or truncated signature', () => {
    const token = forge({ alg: 'HS256', kid: 'pk_a' }, { sub: 'ana', exp: now() + 60 });
    const [h, p, s] = token.split('.') as [string, string, string];
    expect(valid(token)).toBe(true);
    expect(valid(forge({ alg: 'HS256', kid: 'pk_a' }, { sub: 'ana', exp: now() + 60 }, 'sk_other'))).toBe(
      false,
    );
    expect(valid(`${h}.${b64({ sub: 'bo', exp: now() + 60 })}.${s}`)).toBe(false);
    expect(valid(`${h}.${p}.`)).toBe(false);
    expect(valid(`${h}.${p}.${s.slice(0, -1)}`)).toBe(false);
    expect(valid(`${h}.${p}.${s}A`)).toBe(false);
    expect(valid(`${h}.${p}.${s}AAAA`)).toBe(false);
  });

  it('refuses a signature whose last character has stray bits (same bytes, other text)', () => {
    const token = forge({ alg: 'HS256' }, { sub: 'ana' });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = token[token.length - 1]!;
    const twin = `${token.slice(0, -1)}${alphabet[alphabet.indexOf(last) + 1]}`;
    expect(Buffer.from(twin.split('.')[2]!, 'base64url')).toEqual(
      Buffer.from(token.split('.')[2]!, 'base64url'),
    );
    expect(valid(token)).toBe(true);
    expect(valid(twin)).toBe(false);
  });

  it('does not verify HS512 or alg none with this key', () => {
    expect(valid(forge({ alg: 'HS512', kid: 'pk_a' }, { sub: 'ana' }, SECRET, 'sha512'))).toBe(false);
    expect(valid(forge({ alg: 'none', kid: 'pk_a' }, { sub: 'ana' }, null))).toBe(false);
    expect(parseJwt(forge({ alg: 'none' }, { sub: 'ana' }, null))?.header.alg).toBe('none');
  });

  it.each([
    ['garbage', 'not-a-jwt'],
    ['two segments', 'abc.def'],
    ['four segments', `${forge({ alg: 'HS256' }, { sub: 'a' })}.x`],
    ['an empty header', `.${b64({ sub: 'a' })}.sig`],
    ['an empty payload', `${b64({ alg: 'HS256' })}..sig`],
    ['padding', `${b64({ alg: 'HS256' })}=.${b64({ sub: 'a' })}.sig`],
    ['base64 (not url) characters', `${b64({ alg: 'HS256' })}.${b64({ sub: 'a' })}.a+b/`],
    ['a header that is not JSON', `${b64('nope')}.${b64({ sub: 'a' })}.sig`],
    ['a payload that is not JSON', `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64('nope')}.sig`],
    ['a JSON string payload', `${b64({ alg: 'HS256' })}.${b64('"x"')}.sig`],
    ['an array payload', `${b64({ alg: 'HS256' })}.${b64([1])}.sig`],
    ['a null payload', `${b64({ alg: 'HS256' })}.${b64('null')}.sig`],
    ['a header that is an array', `${b64([1])}.${b64({ sub: 'a' })}.sig`],
    ['leading whitespace', ` ${forge({ alg: 'HS256' }, { sub: 'a' })}`],
    ['three garbage segments', 'abc.def.ghi'],
  ])('parses %s as malformed', (_name, token) => {
    expect(parseJwt(token)).toBeNull();
  });

  it('checks nbf and exp like jsonwebtoken (no tolerance)', () => {
    const t = 1_000_000;
    expect(checkTimeClaims({}, t)).toBe('ok');
    expect(checkTimeClaims({ exp: t + 1 }, t)).toBe('ok');
    expect(checkTimeClaims({ exp: t }, t)).toBe('expired');
    expect(checkTimeClaims({ exp: t - 10 }, t)).toBe('expired');
    expect(checkTimeClaims({ exp: String(t + 60) }, t)).toBe('invalid');
    expect(checkTimeClaims({ exp: null }, t)).toBe('invalid');
    expect(checkTimeClaims({ nbf: t, exp: t + 1 }, t)).toBe('ok');
    expect(checkTimeClaims({ nbf: t + 1, exp: t + 60 }, t)).toBe('invalid');
    expect(checkTimeClaims({ nbf: 'x', exp: t + 60 }, t)).toBe('invalid');
  });

  it('knows canonical base64url', () => {
    for (let n = 0; n < 40; n++) {
      const bytes = Buffer.alloc(n, 0xa5);
      expect(isCanonicalBase64url(bytes.toString('base64url'))).toBe(true);
    }
    expect(isCanonicalBase64url('A')).toBe(false);
    expect(isCanonicalBase64url('AB')).toBe(false); // 'B' leaves a stray bit
    expect(isCanonicalBase64url('AQ')).toBe(true);
    expect(isCanonicalBase64url('AAB')).toBe(false);
    expect(isCanonicalBase64url('AAE')).toBe(true);
    expect(isCanonicalBase64url('AA==')).toBe(false);
    expect(isCanonicalBase64url('é')).toBe(false);
  });
});
