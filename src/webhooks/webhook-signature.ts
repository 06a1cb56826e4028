import { createHmac, randomBytes, timingSafeEqual } from 'crypto';

/** `sha256=` + lowercase hex HMAC-SHA256 over `<timestamp>.<raw body>` (SPEC.md, Events → Webhook delivery). */
export function signWebhook(secret: string, timestamp: number | string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/**
 * What a receiver does: recompute over the exact received bytes, compare in constant time, and refuse
 * a timestamp more than `toleranceSeconds` old. Returns 'ok', 'bad_timestamp' (answer 400) or
 * 'bad_signature' (answer 401).
 */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: Buffer | string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): 'ok' | 'bad_timestamp' | 'bad_signature' {
  const ts = headers.timestamp ?? '';
  if (
    !/^\d{1,12}$/.test(ts) ||
    nowSeconds - Number(ts) > toleranceSeconds ||
    Number(ts) - nowSeconds > toleranceSeconds
  )
    return 'bad_timestamp';
  const expected = Buffer.from(signWebhook(secret, ts, rawBody));
  const given = Buffer.from(headers.signature ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'ok' : 'bad_signature';
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
