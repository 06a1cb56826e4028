import { createHmac, randomBytes } from 'crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { jittered, classify } from './webhook-delivery.processor';
import {
  newSigningSecret,
  signWebhook,
  standardWebhookHeaders,
  standardWebhookKeys,
  verifyWebhook,
} from './webhook-signature';

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

  it('makes Standard Webhooks secrets: whsec_ + padded standard base64 of 32 random bytes', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe('Standard Webhooks signature', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const body = Buffer.from('{"event":"user.created","data":{"name":"Zoë"}}');

  it('matches the test vector of the Standard Webhooks reference library', () => {
    // standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts, "sign function works"
    const headers = standardWebhookHeaders(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
    expect(
      standardWebhookHeaders(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        Buffer.from('{"test": 2432232314}'),
      )['webhook-signature'],
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('a new secret verifies with `new Webhook(secret)` as issued, one signature, over the raw bytes', () => {
    const secret = newSigningSecret();
    const headers = standardWebhookHeaders(secret, 'evt-1', now(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(standardWebhookKeys(secret)).toEqual([Buffer.from(secret.slice(6), 'base64')]);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body.toString('utf8')));
    // the X-Service signature keeps the whole string as its key
    expect(signWebhook(secret, 1, body)).toBe(
      `sha256=${createHmac('sha256', secret).update('1.').update(body).digest('hex')}`,
    );
  });

  it('refuses a tampered body, another id, another secret and a stale timestamp', () => {
    const secret = newSigningSecret();
    const headers = standardWebhookHeaders(secret, 'evt-1', now(), body);
    const wh = new Webhook(secret);
    expect(() => wh.verify(Buffer.concat([body, Buffer.from(' ')]), headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'evt-2' })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    const stale = standardWebhookHeaders(secret, 'evt-1', now() - 301, body);
    expect(() => wh.verify(body, stale)).toThrow(/too old/);
  });

  it('an api_secret verifies with the raw format, as stored', () => {
    const apiSecret = `sk_${randomBytes(32).toString('base64url')}`;
    const headers = standardWebhookHeaders(apiSecret, 'evt-1', now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(apiSecret, { format: 'raw' }).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(apiSecret)).toThrow(); // not base64: the libraries say so at once
  });

  it('a secret issued before (whsec_ + base64url) verifies as stored with the raw format, and as the bytes it encodes', () => {
    const withUrlChars = 'whsec_JgUcC7TDY-gBiA_PzQkntXBM6CQCOk1rXH2tb7Edzv4';
    const withoutUrlChars = 'whsec_R9Uhz0QdDQ7P5FUWZdac6cJETds6S0r1Y0GQwp7BQY4';
    for (const legacy of [withUrlChars, withoutUrlChars]) {
      const headers = standardWebhookHeaders(legacy, 'evt-1', now(), body);
      expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
      expect(new Webhook(legacy, { format: 'raw' }).verify(body, headers)).toBeTruthy();
      const bytes = Buffer.from(legacy.slice(6), 'base64url');
      expect(bytes).toHaveLength(32);
      expect(new Webhook(`whsec_${bytes.toString('base64')}`).verify(body, headers)).toBeTruthy();
      expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    }
    // where the libraries accept the old secret as it is, their plain constructor verifies too
    expect(() => new Webhook(withUrlChars)).toThrow();
    const plain = new Webhook(withoutUrlChars);
    expect(plain.verify(body, standardWebhookHeaders(withoutUrlChars, 'evt-1', now(), body))).toBeTruthy();
  });

  it('keys any other string by its bytes', () => {
    expect(standardWebhookKeys('whsec_')).toEqual([Buffer.from('whsec_')]);
    expect(standardWebhookKeys('whsec_not base64!')).toEqual([Buffer.from('whsec_not base64!')]);
    expect(standardWebhookKeys('whsec_test')).toEqual([Buffer.from('test', 'base64')]);
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
