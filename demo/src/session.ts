/**
 * How the page gets a user token. Never with the workspace secret: either the service's development
 * sign-in (SERVICE_DEMO, on by default on the embedded database) mints one, or the user pastes one their
 * backend issued (POST /v1/users/:external_id/token with the workspace key, on the server).
 */
export interface Session {
  token: string;
  /** The signed-in user's external id (the token's `sub`). */
  userId: string;
  /** The user's internal id, when known (tokens the service issues carry it as `uid`). */
  uid?: string;
  expiresAt: string | null;
  /** How it was obtained: a development sign-in can be renewed by signing in again. */
  via: 'dev' | 'pasted';
}

/** Per tab (sessionStorage), so two windows can be two users, and gone with the tab. */
const STORAGE_KEY = 'chat-service-demo:session';

export function savedSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    if (s.expiresAt && Date.parse(s.expiresAt) < Date.now() + 60_000) return null;
    return s;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export async function demoConfig(): Promise<{ dev_sign_in: boolean }> {
  try {
    const res = await fetch('./config.json', { cache: 'no-cache' });
    if (res.ok) return (await res.json()) as { dev_sign_in: boolean };
  } catch {
    // offline or an old server: offer the pasted token only
  }
  return { dev_sign_in: false };
}

/** The development sign-in; throws an Error with the service's message on refusal. */
export async function devSignIn(userId: string, name: string): Promise<Session> {
  const res = await fetch('./api/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(name ? { user_id: userId, name } : { user_id: userId }),
  });
  const body = (await res.json().catch(() => ({}))) as {
    token?: string;
    expires_at?: string;
    user?: { id: string };
    error?: { message?: string; details?: { message: string }[] };
  };
  if (!res.ok || !body.token) {
    if (res.status === 404)
      throw new Error('The development sign-in is off on this server (SERVICE_DEMO). Paste a token instead.');
    throw new Error(
      body.error?.details?.[0]?.message ?? body.error?.message ?? `Sign-in failed (${res.status})`,
    );
  }
  return { token: body.token, userId, uid: body.user?.id, expiresAt: body.expires_at ?? null, via: 'dev' };
}

/** Reads `sub` and `exp` from a pasted token (display only: the service verifies it on every call). */
export function pastedSession(token: string): Session {
  const parts = token.trim().split('.');
  if (parts.length !== 3) throw new Error('That is not a JWT (three dot-separated parts).');
  let payload: { sub?: unknown; exp?: unknown; uid?: unknown };
  try {
    payload = JSON.parse(atob(parts[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as typeof payload;
  } catch {
    throw new Error('The token could not be read.');
  }
  if (typeof payload.sub !== 'string') throw new Error('The token has no user (sub).');
  const expiresAt = typeof payload.exp === 'number' ? new Date(payload.exp * 1000).toISOString() : null;
  if (expiresAt && Date.parse(expiresAt) < Date.now()) throw new Error('The token has expired.');
  const uid = typeof payload.uid === 'string' ? payload.uid : undefined;
  return { token: token.trim(), userId: payload.sub, uid, expiresAt, via: 'pasted' };
}
