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

const STANDARD_PREFIX = 'whsec_';

/**
 * A Standard Webhooks secret: `whsec_` + standard, padded base64 of 32 random bytes, which
 * `new Webhook(secret)` of the `standardwebhooks` (and `svix`) libraries decodes to the key bytes. The
 * whole string stays the `X-Service-Signature` HMAC key, as SPEC.md says.
 */
export function newSigningSecret(): string {
  return `${STANDARD_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The HMAC keys of the Standard Webhooks signature for a signing secret as stored, one `v1` signature
 * each in `webhook-signature` (the scheme allows several, space-separated):
 * - `whsec_` + canonical standard base64 (every secret issued since Standard Webhooks support): the
 *   decoded bytes, exactly what `new Webhook(secret)` of `standardwebhooks` (or `svix`) uses;
 * - anything else: the secret string's own bytes, exactly what `new Webhook(secret, { format: 'raw' })`
 *   uses (the secrets are ASCII). That covers the workspace `api_secret` (`sk_…`) of webhooks signed
 *   with it, and the secrets issued before (`whsec_` + unpadded base64url, which those libraries
 *   refuse, or for a quarter of them, the ones without `-` or `_`, decode). For those a second key is
 *   the bytes the base64url encodes, so the libraries' plain `new Webhook(secret)` verifies whenever it
 *   accepts the secret, and so does the secret rewritten as `whsec_` + standard base64.
 */
export function standardWebhookKeys(secret: string): Buffer[] {
  if (!secret.startsWith(STANDARD_PREFIX)) return [Buffer.from(secret, 'utf8')];
  const encoded = secret.slice(STANDARD_PREFIX.length);
  const standard = Buffer.from(encoded, 'base64');
  // Buffer's decoders skip what they cannot read, so only a round trip proves the encoding
  if (standard.length > 0 && standard.toString('base64') === encoded) return [standard];
  const legacy = Buffer.from(encoded, 'base64url');
  return legacy.length > 0 && legacy.toString('base64url') === encoded
    ? [Buffer.from(secret, 'utf8'), legacy]
    : [Buffer.from(secret, 'utf8')];
}

/**
 * The Standard Webhooks headers of one attempt (standardwebhooks.com, "Signature scheme"): `webhook-id`
 * is stable across every attempt of the message, `webhook-timestamp` is this attempt's unix seconds, and
 * `webhook-signature` is `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<raw body>`, per key.
 */
export function standardWebhookHeaders(
  secret: string,
  id: string,
  timestamp: number,
  body: Buffer | string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const signatures = standardWebhookKeys(secret).map(
    (key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`,
  );
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

/**
 * Every signature header of one signed call (a webhook delivery attempt, a pre-send hook call): SPEC.md's
 * `X-Service-*` and Standard Webhooks' `webhook-*`, `webhook-id` being the event id.
 */
export function signedCallHeaders(
  secret: string,
  event: string,
  eventId: string,
  body: Buffer,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'X-Service-Event': event,
    'X-Service-Event-Id': eventId,
    'X-Service-Signature': signWebhook(secret, timestamp, body),
    'X-Service-Timestamp': String(timestamp),
    ...standardWebhookHeaders(secret, eventId, timestamp, body),
  };
}
