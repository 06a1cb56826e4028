/** A user JWT, or a function that answers one (called again on reconnect and before the token expires). */
export type TokenProvider = () => string | Promise<string>;
export type TokenSource = string | TokenProvider;

/** The `exp` claim of a JWT in milliseconds since the epoch, or undefined when it has none or is not a JWT. */
export function jwtExpiry(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
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
    const exp = jwtExpiry(t);
    return exp === undefined ? undefined : Math.max(0, exp - this.refreshBeforeMs - this.now());
  }

  private expiresSoon(token: string): boolean {
    const exp = jwtExpiry(token);
    return exp !== undefined && exp - this.refreshBeforeMs <= this.now();
  }
}
