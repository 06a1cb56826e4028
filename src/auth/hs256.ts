import { createHmac, createSecretKey, KeyObject, timingSafeEqual } from 'crypto';

/**
 * HS256 JWTs without jsonwebtoken on the hot path. jsonwebtoken.verify with a string secret first tries
 * to parse it as a PEM/DER public key (createPublicKey throws, ~0.6 ms) before falling back to an HMAC
 * key, then decodes the token a second time; here the secret is a KeyObject made once and the token is
 * parsed once, strictly, and checked with an HMAC over the exact signing input.
 *
 * Accepts what jsonwebtoken.verify(token, secret, { algorithms: ['HS256'] }) accepts, except that the
 * base64url segments must be canonical (no padding, no stray bits) and header and payload must be JSON
 * objects: a token that jsonwebtoken signs always is.
 */

export type Json = Record<string, unknown>;

export interface ParsedJwt {
  header: Json;
  payload: Json;
  /** `<header>.<payload>`, the bytes the signature covers, exactly as received. */
  signingInput: string;
  /** The third segment as received (may be empty). */
  signature: string;
}

/** An HMAC key for HS256: made once per secret, reused for every token signed with it. */
export function hmacKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

// base64url alphabet, as a char-code table
const B64URL = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')
  B64URL[c.charCodeAt(0)] = 1;
// the characters a canonical encoding may end with when the last group has 2 or 3 characters
// (the bits beyond the data must be zero)
const LAST_OF_2 = new Set('AQgw');
const LAST_OF_3 = new Set('AEIMQUYcgkosw048');

function isBase64urlAlphabet(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || B64URL[c] !== 1) return false;
  }
  return true;
}

/** Strict base64url: the alphabet only, no padding, a possible length, zero trailing bits. */
export function isCanonicalBase64url(s: string, start = 0, end = s.length): boolean {
  const rest = (end - start) % 4;
  if (rest === 1 || !isBase64urlAlphabet(s, start, end)) return false;
  if (rest === 2) return LAST_OF_2.has(s[end - 1]!);
  if (rest === 3) return LAST_OF_3.has(s[end - 1]!);
  return true;
}

function jsonObject(segment: string): Json | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

/**
 * Splits and decodes a compact JWS without checking the signature: three segments, header and payload
 * non-empty canonical base64url JSON objects, signature empty or of the base64url alphabet (its length
 * and encoding are the signature check's business: a wrong one is an invalid, not a malformed, token).
 * Null otherwise.
 */
export function parseJwt(token: string): ParsedJwt | null {
  const d1 = token.indexOf('.');
  if (d1 <= 0) return null;
  const d2 = token.indexOf('.', d1 + 1);
  if (d2 < 0 || d2 === d1 + 1 || token.indexOf('.', d2 + 1) >= 0) return null;
  if (
    !isCanonicalBase64url(token, 0, d1) ||
    !isCanonicalBase64url(token, d1 + 1, d2) ||
    !isBase64urlAlphabet(token, d2 + 1, token.length)
  )
    return null;
  const header = jsonObject(token.slice(0, d1));
  if (!header) return null;
  const payload = jsonObject(token.slice(d1 + 1, d2));
  if (!payload) return null;
  return { header, payload, signingInput: token.slice(0, d2), signature: token.slice(d2 + 1) };
}

/** HMAC-SHA256 of the signing input, compared in constant time with the (canonical, 32-byte) signature. */
export function hs256SignatureOk(jwt: ParsedJwt, key: KeyObject): boolean {
  const expected = createHmac('sha256', key).update(jwt.signingInput).digest();
  // 32 bytes are exactly 43 canonical base64url characters (the last one with two zero bits)
  const sig = jwt.signature;
  if (sig.length !== 43 || !isCanonicalBase64url(sig)) return false;
  return timingSafeEqual(Buffer.from(sig, 'base64url'), expected);
}

export type TimeClaimsVerdict = 'ok' | 'invalid' | 'expired';

/**
 * The registered time claims as jsonwebtoken.verify checks them (no clock tolerance): a present `nbf`
 * must be a number not after now, a present `exp` a number after now ('expired' otherwise).
 */
export function checkTimeClaims(
  payload: Json,
  nowSeconds = Math.floor(Date.now() / 1000),
): TimeClaimsVerdict {
  const { nbf, exp } = payload;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds)) return 'invalid';
  if (exp !== undefined) {
    if (typeof exp !== 'number') return 'invalid';
    if (nowSeconds >= exp) return 'expired';
  }
  return 'ok';
}
