/** A user JWT, or a function that answers one (called again on reconnect and before the token expires). */
export type TokenProvider = () => string | Promise<string>;
export type TokenSource = string | TokenProvider;

/** The `exp` and `iat` claims of a JWT in milliseconds since the epoch (undefined when absent or not a JWT). */
export function jwtTimes(token: string): { exp?: number; iat?: number } {
  const part = token.split('.')[1];
  if (!part) return {};
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const claims = JSON.parse(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))) as {
      exp?: unknown;
      iat?: unknown;
    };
    const ms = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v * 1000 : undefined);
    const exp = ms(claims.exp);
    const iat = ms(claims.iat);
    return { ...(exp !== undefined ? { exp } : {}), ...(iat !== undefined ? { iat } : {}) };
  } catch {
    return {};
  }
}

/** The `exp` claim of a JWT in milliseconds since the epoch, or undefined when it has none or is not a JWT. */
export function jwtExpiry(token: string): number | undefined {
  return jwtTimes(token).exp;
}

/**
 * Holds the current token: asks the provider for one when there is none, when the one held is within
 * `refreshBeforeMs` of its `exp`, or when the service refused it (401). Concurrent callers share one
 * provider call.
 */
export class TokenManager {
  private token?: string;
  private pending?: Promise<string>;

  constructor(
    private readonly source: TokenSource,
    private readonly refreshBeforeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a new token can be had (a provider, not a fixed string). */
  get refreshable(): boolean {
    return typeof this.source === 'function';
  }

  /** The token to use now. */
  async get(): Promise<string> {
    if (typeof this.source === 'string') return this.source;
    if (this.token !== undefined && !this.expiresSoon(this.token)) return this.token;
    return this.refresh();
  }

  /** Asks the provider again (after a 401, or ahead of expiry). */
  refresh(): Promise<string> {
    if (typeof this.source === 'string') return Promise.resolve(this.source);
    if (!this.pending) {
      const provider = this.source;
      this.pending = Promise.resolve()
        .then(() => provider())
        .then(
          (t) => {
            this.token = t;
            this.pending = undefined;
            return t;
          },
          (e: unknown) => {
            this.pending = undefined;
            throw e;
          },
        );
    }
    return this.pending;
  }

  /** Milliseconds until the held token should be replaced, or undefined (fixed token, no exp). */
  msUntilRefresh(): number | undefined {
    const t = typeof this.source === 'string' ? this.source : this.token;
    if (t === undefined || !this.refreshable) return undefined;
    const at = this.refreshAt(t);
    return at === undefined ? undefined : Math.max(0, at - this.now());
  }

  /**
   * When a token should be replaced: `refreshBeforeMs` ahead of its `exp`, but never before the first
   * three quarters of its lifetime (a short-lived token would otherwise be replaced at once, forever).
   */
  private refreshAt(token: string): number | undefined {
    const { exp, iat } = jwtTimes(token);
    if (exp === undefined) return undefined;
    const margin =
      iat !== undefined && exp > iat ? Math.min(this.refreshBeforeMs, (exp - iat) / 4) : this.refreshBeforeMs;
    return exp - margin;
  }

  private expiresSoon(token: string): boolean {
    const at = this.refreshAt(token);
    return at !== undefined && at <= this.now();
  }
}
