import { Inject, Injectable } from '@nestjs/common';
import { JsonWebTokenError, sign, verify, decode } from 'jsonwebtoken';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { Authenticator } from '../common/auth/authenticator';
import type { BackendPrincipal, Principal, UserPrincipal } from '../common/auth/principal';
import { safeEqual, SecretBox, sha256Hex } from '../common/crypto';
import { AppError } from '../common/errors/app-error';
import { WorkspacesRepository } from '../workspaces/workspaces.repository';

export const MAX_TOKEN_LIFETIME_SECONDS = 86_400;
/** Tolerated clock skew for `iat` in the future. */
const CLOCK_SKEW_SECONDS = 60;

const unauthorized = (message = 'Missing or invalid credentials') => new AppError('UNAUTHORIZED', message);

/**
 * Verifies the three credential kinds of CONTRACT §3. JWTs are checked with jsonwebtoken (the library
 * passport-jwt wraps) directly, so HTTP and the Socket.IO handshake share one verifier.
 */
@Injectable()
export class CredentialsService extends Authenticator {
  constructor(
    private readonly keys: WorkspacesRepository,
    private readonly box: SecretBox,
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
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

    const admin = this.config.SERVICE_ADMIN_TOKEN;
    if (admin && safeEqual(value, admin)) return { kind: 'admin' };
    if (value.startsWith('pk_')) {
      const colon = value.indexOf(':');
      if (colon < 0) throw unauthorized('A workspace key needs its secret: Bearer pk_…:sk_…');
      return this.keyPair(value.slice(0, colon), value.slice(colon + 1));
    }
    return this.userToken(value);
  }

  async keyPair(apiKey: string, apiSecret: string): Promise<BackendPrincipal> {
    if (!apiKey.startsWith('pk_') || !apiSecret) throw unauthorized();
    const key = await this.keys.findActiveKey(apiKey);
    // compare even when the key is unknown, so timing does not tell keys apart
    const ok = safeEqual(sha256Hex(apiSecret), key?.secret_sha256 ?? sha256Hex(`absent:${apiKey}`));
    if (!key || !ok) throw unauthorized();
    return { kind: 'backend', workspaceId: key.workspace_id, apiKey: key.api_key };
  }

  /** HS256 only, kid = a current (or in-grace) api key, sub/iat/exp required, lifetime ≤ 24 h, user must exist. */
  async userToken(token: string): Promise<UserPrincipal> {
    const decoded = decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string') throw unauthorized('Malformed token');
    const { header } = decoded;
    if (header.alg !== 'HS256') throw unauthorized('Only HS256 tokens are accepted');
    if (typeof header.kid !== 'string' || !header.kid) throw unauthorized('The token has no kid');
    const sub = decoded.payload.sub;
    if (typeof sub !== 'string' || !sub) throw unauthorized('The token has no sub');

    const rows: { workspace_id: string; secret_sealed: string; user_id: string | null }[] = await this.db.query(
      `SELECT k.workspace_id, k.secret_sealed, u.id AS user_id
         FROM workspace_keys k
         LEFT JOIN users u ON u.workspace_id = k.workspace_id AND u.external_id = $2
        WHERE k.api_key = $1 AND (k.expires_at IS NULL OR k.expires_at > now())`,
      [header.kid, sub],
    );
    const row = rows[0];
    if (!row) throw unauthorized('Unknown kid');
    let claims: { sub?: unknown; iat?: unknown; exp?: unknown };
    try {
      const verified = verify(token, this.box.open(row.secret_sealed), { algorithms: ['HS256'] });
      if (typeof verified === 'string') throw unauthorized('Malformed token');
      claims = verified;
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw unauthorized(e instanceof JsonWebTokenError && e.name === 'TokenExpiredError' ? 'The token has expired' : 'Invalid token');
    }
    const { iat, exp } = claims;
    if (typeof iat !== 'number' || typeof exp !== 'number') throw unauthorized('The token needs iat and exp');
    if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) throw unauthorized('The token lives longer than 24 hours');
    if (iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS) throw unauthorized('The token was issued in the future');
    if (!row.user_id) throw unauthorized('Unknown user');
    return { kind: 'user', workspaceId: row.workspace_id, userId: row.user_id, externalId: sub };
  }

  /** Signs a user token with the workspace's current secret (kid = its api key). */
  async issueUserToken(workspaceId: string, externalId: string, ttlSeconds: number): Promise<{ token: string; expires_at: string }> {
    const key = await this.keys.findCurrentKey(workspaceId);
    if (!key) throw new AppError('INTERNAL');
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ttlSeconds;
    const token = sign({ sub: externalId, iat, exp }, this.box.open(key.secret_sealed), {
      algorithm: 'HS256',
      keyid: key.api_key,
    });
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }

  /** The secret of the workspace's current key (signing webhooks with `signing: "api_secret"`). */
  async currentSecret(workspaceId: string): Promise<string> {
    const key = await this.keys.findCurrentKey(workspaceId);
    if (!key) throw new AppError('INTERNAL');
    return this.box.open(key.secret_sealed);
  }
}
