import { randomBytes } from 'crypto';
import { decode, sign, verify } from 'jsonwebtoken';
import { loadavg } from 'os';
import { checkTimeClaims, hmacKey, hs256SignatureOk, parseJwt } from '../src/auth/hs256';
import { SecretBox } from '../src/common/crypto';

/**
 * Micro-benchmark of one user-JWT check, CPU only (no database): `npx ts-node --transpile-only bench/jwt-verify.ts`.
 *
 * - before: what CredentialsService did per request: decode (header, kid), open the sealed secret
 *   (AES-256-GCM), jsonwebtoken.verify with the secret as a string (it tries createPublicKey first).
 * - jsonwebtoken + KeyObject: decode, then verify with a cached createSecretKey KeyObject.
 * - direct HMAC: parseJwt (strict base64url, one JSON.parse per segment) + HMAC-SHA256 with the cached
 *   KeyObject + timingSafeEqual + the time claims, what CredentialsService does now.
 */
const secret = `sk_${randomBytes(32).toString('base64url')}`;
const box = new SecretBox(randomBytes(32));
const sealed = box.seal(secret);
const key = hmacKey(secret);
const iat = Math.floor(Date.now() / 1000);
const token = sign({ sub: 'ana', iat, exp: iat + 3600 }, secret, {
  algorithm: 'HS256',
  keyid: 'pk_bench0000000000',
});

function bench(name: string, fn: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.min(2000, iterations); i++) fn(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  const us = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  process.stdout.write(
    `${name.padEnd(28)} ${us.toFixed(2).padStart(8)} µs/verify  (${iterations} iterations)\n`,
  );
  return us;
}

const variants: [string, () => unknown, number][] = [
  [
    'before (string secret)',
    () => {
      const d = decode(token, { complete: true });
      if (!d) throw new Error('decode');
      return verify(token, box.open(sealed), { algorithms: ['HS256'] });
    },
    5_000,
  ],
  [
    'jsonwebtoken + KeyObject',
    () => {
      const d = decode(token, { complete: true });
      if (!d) throw new Error('decode');
      return verify(token, key, { algorithms: ['HS256'] });
    },
    50_000,
  ],
  [
    'direct HMAC (now)',
    () => {
      const p = parseJwt(token);
      if (!p || p.header.alg !== 'HS256' || !hs256SignatureOk(p, key) || checkTimeClaims(p.payload) !== 'ok')
        throw new Error('verify');
      return p.payload;
    },
    50_000,
  ],
];

process.stdout.write(
  `node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}\n`,
);
for (let round = 1; round <= 3; round++) {
  process.stdout.write(`round ${round}\n`);
  for (const [name, fn, n] of variants) bench(name, fn, n);
}
