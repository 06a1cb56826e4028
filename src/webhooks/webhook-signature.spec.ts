import { createHmac } from 'crypto';
import { jittered, classify } from './webhook-delivery.processor';
import { newSigningSecret, signWebhook, verifyWebhook } from './webhook-signature';

describe('webhook signature', () => {
  const secret = 'whsec_test';
  const body = Buffer.from('{"event":"user.created","data":{"name":"Zoë"}}');

  it('is sha256= + lowercase hex HMAC-SHA256 over "<timestamp>.<raw body>"', () => {
    const expected = createHmac('sha256', secret)
      .update(`1700000000.${body.toString('utf8')}`)
      .digest('hex');
    expect(signWebhook(secret, 1700000000, body)).toBe(`sha256=${expected}`);
    expect(signWebhook(secret, '1700000000', body.toString('utf8'))).toBe(`sha256=${expected}`);
  });

  it('verifies in the receiver: good, tampered, wrong key, stale and future timestamps', () => {
    const now = 1_700_000_000;
    const ts = String(now - 10);
    const signature = signWebhook(secret, ts, body);
    expect(verifyWebhook(secret, { timestamp: ts, signature }, body, now)).toBe('ok');
    expect(
      verifyWebhook(secret, { timestamp: ts, signature }, Buffer.concat([body, Buffer.from(' ')]), now),
    ).toBe('bad_signature');
    expect(verifyWebhook('whsec_other', { timestamp: ts, signature }, body, now)).toBe('bad_signature');
    expect(verifyWebhook(secret, { timestamp: ts, signature: signature.toUpperCase() }, body, now)).toBe(
      'bad_signature',
    );
    expect(verifyWebhook(secret, { timestamp: ts, signature: undefined }, body, now)).toBe('bad_signature');
    const old = String(now - 301);
    expect(
      verifyWebhook(secret, { timestamp: old, signature: signWebhook(secret, old, body) }, body, now),
    ).toBe('bad_timestamp');
    const future = String(now + 301);
    expect(
      verifyWebhook(secret, { timestamp: future, signature: signWebhook(secret, future, body) }, body, now),
    ).toBe('bad_timestamp');
    expect(verifyWebhook(secret, { timestamp: 'soon', signature }, body, now)).toBe('bad_timestamp');
  });

  it('makes whsec_ secrets with 256 bits of randomness', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe('attempt outcomes', () => {
  it('classifies statuses', () => {
    expect(classify(200, '').kind).toBe('success');
    expect(classify(204, '').kind).toBe('success');
    expect(classify(400, '').kind).toBe('terminal');
    expect(classify(410, '').kind).toBe('terminal');
    expect(classify(302, '')).toMatchObject({ kind: 'terminal', error: 'redirects are not followed' });
    expect(classify(500, '').kind).toBe('retryable');
    expect(classify(503, '').kind).toBe('retryable');
  });

  it('jitters the retry delay within ±jitter', () => {
    expect(jittered(30, 0.2, 0)).toBe(24_000);
    expect(jittered(30, 0.2, 1)).toBe(36_000);
    expect(jittered(30, 0.2, 0.5)).toBe(30_000);
    expect(jittered(0.2, 0, 0.9)).toBe(200);
  });
});
