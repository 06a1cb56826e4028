import { createHmac } from 'crypto';

const b64url = (v: unknown): string =>
  Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/**
 * Builds a JWT by hand so tests can forge anything the contract must refuse (alg none, HS512, missing
 * claims, tampered payloads). `secret: null` leaves the signature empty.
 */
export function forgeJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | null,
): string {
  const head = `${b64url(header)}.${b64url(payload)}`;
  if (secret === null) return `${head}.`;
  const alg = header.alg === 'HS512' ? 'sha512' : header.alg === 'HS384' ? 'sha384' : 'sha256';
  return `${head}.${createHmac(alg, secret).update(head).digest('base64url')}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Splits a compact JWT into its decoded header and payload (no verification). */
export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}
