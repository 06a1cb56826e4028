import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'crypto';
import { sign } from 'jsonwebtoken';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { Authenticator } from '../common/auth/authenticator';
import type { BackendPrincipal, Principal, UserPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { uuidv7Millis } from '../common/ids';
import { checkTimeClaims, hs256SignatureOk, parseJwt } from './hs256';
import { EXTERNAL_ID_PATTERN } from '../common/external-id';
import { UserIdCache } from './user-id.cache';
import { WorkspaceKeyCache } from './workspace-key.cache';

export const MAX_TOKEN_LIFETIME_SECONDS = 86_400;
/** Tolerated clock skew for `iat` in the future. */
const CLOCK_SKEW_SECONDS = 60;

const unauthorized = (message = 'Missing or invalid credentials') => new AppError('UNAUTHORIZED', message);
const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** A user's id by workspace and external id, or null when there is no such user. */
export type UserLookup = (workspaceId: string, externalId: string) => Promise<string | null>;

/**
 * Verifies the three credential kinds of CONTRACT §3; HTTP and the Socket.IO handshake share it. Keys come
 * from WorkspaceKeyCache (no query, no decryption per request); user JWTs are checked by hs256.ts (an
 * HMAC with the key's cached KeyObject over the exact signing input), then the user is looked up.
 */

@Injectable()
export class CredentialsService extends Authenticator {
  /** SHA-256 of SERVICE_ADMIN_TOKEN, computed once (compared in constant time). */
  private readonly adminHash: Buffer | null;

  constructor(
    private readonly keys: WorkspaceKeyCache,
    private readonly userIds: UserIdCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
    this.adminHash = config.SERVICE_ADMIN_TOKEN ? sha256(config.SERVICE_ADMIN_TOKEN) : null;
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (!authorization) throw unauthorized('Missing Authorization header');
    const space = authorization.indexOf(' ');
    const scheme = space > 0 ? authorization.slice(0, space).toLowerCase() : '';
    const value = space > 0 ? authorization.slice(space + 1).trim() : '';
    if (!value) throw unauthorized('Malformed Authorization header');

    if (scheme === 'basic') {
      let decoded: string;
      try {
        decoded = Buffer.from(value, 'base64').toString('utf8');
      } catch {
        throw unauthorized('Malformed Basic credentials');
      }
      const colon = decoded.indexOf(':');
      if (colon < 0) throw unauthorized('Malformed Basic credentials');
      return this.keyPair(decoded.slice(0, colon), decoded.slice(colon + 1));
    }
    if (scheme !== 'bearer') throw unauthorized('Unsupported authorization scheme');

    if (this.isAdminToken(value)) return { kind: 'admin' };
    if (value.startsWith('pk_')) {
      const colon = value.indexOf(':');
      if (colon < 0) throw unauthorized('A workspace key needs its secret: Bearer pk_…:sk_…');
      return this.keyPair(value.slice(0, colon), value.slice(colon + 1));
    }
    return this.userToken(value);
  }

  async keyPair(apiKey: string, apiSecret: string): Promise<BackendPrincipal> {
    if (!apiKey.startsWith('pk_') || !apiSecret) throw unauthorized();
    const key = await this.keys.verifyPair(apiKey, apiSecret);
    if (!key) throw unauthorized();
    return { kind: 'backend', workspaceId: key.workspaceId, apiKey: key.apiKey };
  }

  /** HS256 only, kid = a current (or in-grace) api key, sub/iat/exp required, lifetime ≤ 24 h, user must exist. */
  async userToken(token: string): Promise<UserPrincipal> {
    return (await this.userSession(token)).principal;
  }

  /**
   * A user token's principal and until when it holds (ms since the epoch): its `exp`, or the end of the
   * grace period of the key that signed it when that comes first. A live socket is closed then.
   * `lookup` finds the user's id (by default through the cache); a socket's handshake passes its own,
   * which loads what the socket needs with it.
   */
  async userSession(
    token: string,
    lookup: UserLookup = (w, e) => this.userIds.get(w, e),
  ): Promise<{ principal: UserPrincipal; validUntil: number }> {
    const jwt = parseJwt(token);
    if (!jwt) throw unauthorized('Malformed token');
    const { header, payload } = jwt;
    if (header.alg !== 'HS256') throw unauthorized('Only HS256 tokens are accepted');
    if (typeof header.kid !== 'string' || !header.kid) throw unauthorized('The token has no kid');
    const sub = payload.sub;
    if (typeof sub !== 'string' || !sub) throw unauthorized('The token has no sub');

    const key = await this.keys.active(header.kid);
    if (!key) throw unauthorized('Unknown kid');
    if (!hs256SignatureOk(jwt, key.hmac)) throw unauthorized('Invalid token');
    const time = checkTimeClaims(payload);
    if (time !== 'ok') throw unauthorized(time === 'expired' ? 'The token has expired' : 'Invalid token');
    const { iat, exp } = payload;
    if (typeof iat !== 'number' || typeof exp !== 'number') throw unauthorized('The token needs iat and exp');
    if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) throw unauthorized('The token lives longer than 24 hours');
    if (iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS)
      throw unauthorized('The token was issued in the future');

    // no user has such an id (nor one with a NUL, which the pattern lets through and PostgreSQL cannot
    // hold): not worth a lookup, nor able to fail one that other handshakes share
    if (!EXTERNAL_ID_PATTERN.test(sub) || sub.includes('\0')) throw unauthorized('Unknown user');
    const userId = await lookup(key.workspaceId, sub);
    if (!userId) throw unauthorized('Unknown user');
    // a token dies with its user: one naming an earlier user of this external id (deleted, then created
    // again) is refused: by the user id a token issued here carries (`uid`), else by its `iat` against
    // the user's creation (in the UUIDv7 id), within the clock skew allowed for a backend's own tokens
    const earlier =
      typeof payload.uid === 'string'
        ? payload.uid !== userId
        : iat < uuidv7Millis(userId) / 1000 - CLOCK_SKEW_SECONDS;
    if (earlier) throw unauthorized('The token was issued to an earlier user of this external id');
    return {
      principal: { kind: 'user', workspaceId: key.workspaceId, userId, externalId: sub },
      validUntil: Math.min(exp * 1000, key.expiresAt ?? Infinity),
    };
  }

  /** Signs a user token with the workspace's current secret (kid = its api key); `uid` ties it to this user. */
  async issueUserToken(
    workspaceId: string,
    user: { id: string; external_id: string },
    ttlSeconds: number,
  ): Promise<{ token: string; expires_at: string }> {
    const key = await this.keys.currentKey(workspaceId);
    if (!key) throw new AppError('INTERNAL');
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ttlSeconds;
    const token = sign({ sub: user.external_id, uid: user.id, iat, exp }, key.hmac, {
      algorithm: 'HS256',
      keyid: key.apiKey,
    });
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }

  private isAdminToken(value: string): boolean {
    const admin = this.config.SERVICE_ADMIN_TOKEN;
    if (!admin || !this.adminHash) return false;
    return timingSafeEqual(sha256(value), this.adminHash) && value.length === admin.length;
  }

  /** The secret of the workspace's current key (signing webhooks with `signing: "api_secret"`). */
  async currentSecret(workspaceId: string): Promise<string> {
    const key = await this.keys.currentKey(workspaceId);
    if (!key) throw new AppError('INTERNAL');
    return key.hmac.export().toString('utf8');
  }
}
