import { createHmac } from 'crypto';
import { ADMIN_TOKEN } from '../support/app';
import type { AuthCase, BodyCase, Case, JwtSpec } from './cases';
import { RawText } from './cases';
import type { Operation } from './openapi';
import { rawRequest, RawRequest, RawResponse } from './raw-http';
import { Gen, RawNumber } from './values';
import { Ref, RefName, World } from './world';

export interface Exchange {
  request: RawRequest;
  response: RawResponse;
  /** The resources the path named (a 2xx DELETE makes them stale). */
  pathRefs: RefName[];
}

const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Percent-encodes like encodeURIComponent, except that a lone UTF-16 surrogate (which that throws on)
 * becomes the three bytes a careless encoder would send for it (`\ud800` → `%ED%A0%80`).
 */
export function encodeText(s: string, keepSlash = false): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += encodeURIComponent(s.slice(i, i + 2));
        i++;
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map(hex).join('');
      continue;
    }
    const ch = s[i]!;
    out += keepSlash && ch === '/' ? '/' : encodeURIComponent(ch);
  }
  return out;
}

/** JSON text of a generated value: refs resolved, raw numbers verbatim, `__proto__` keys kept as keys. */
async function jsonText(v: Gen, world: World): Promise<string> {
  if (v instanceof Ref) return JSON.stringify(await world.get(v.name));
  if (v instanceof RawNumber) return v.text;
  if (v instanceof RawText) return JSON.stringify(v.text);
  if (Array.isArray(v)) return `[${(await Promise.all(v.map((x) => jsonText(x, world)))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const parts = await Promise.all(
      Object.entries(v).map(async ([k, x]) => `${JSON.stringify(k)}:${await jsonText(x, world)}`),
    );
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A URL component: a ref's value or a string encoded, raw text as written. */
async function urlText(v: Gen, world: World, keepSlash = false): Promise<string> {
  if (v instanceof RawText) return v.text;
  if (v instanceof Ref) return encodeText(await world.get(v.name), keepSlash);
  return encodeText(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''), keepSlash);
}

async function jwt(spec: JwtSpec, world: World): Promise<string> {
  const c = await world.credentials();
  const now = Math.floor(Date.now() / 1000);
  const header = {
    alg: spec.alg ?? 'HS256',
    typ: 'JWT',
    kid: spec.kid === undefined || spec.kid === 'KEY' ? c.apiKey : spec.kid,
  };
  const payload = { sub: spec.sub ?? 'ana', iat: spec.iat ?? now, exp: spec.exp ?? now + 3600 };
  const b64 = async (v: Gen) => Buffer.from(await jsonText(v, world)).toString('base64url');
  const head = `${await b64(header)}.${await b64(payload)}`;
  if (spec.sign === 'none') return `${head}.`;
  return `${head}.${createHmac('sha256', spec.sign === 'secret' ? c.apiSecret : 'not-the-secret')
    .update(head)
    .digest('base64url')}`;
}

async function authorization(a: AuthCase, world: World): Promise<string | undefined> {
  switch (a.kind) {
    case 'none':
      return undefined;
    case 'adminToken':
      return `Bearer ${ADMIN_TOKEN}`;
    case 'workspaceKey': {
      const c = await world.credentials();
      return `Bearer ${c.apiKey}:${c.apiSecret}`;
    }
    case 'workspaceBasic': {
      const c = await world.credentials();
      return `Basic ${Buffer.from(`${c.apiKey}:${c.apiSecret}`).toString('base64')}`;
    }
    case 'userJwt':
      return `Bearer ${await world.tokenFor(a.user)}`;
    case 'header':
      return a.value;
    case 'basic': {
      const c = await world.credentials();
      const user = a.user === 'KEY' ? c.apiKey : String(a.user);
      const password = a.password === 'SECRET' ? c.apiSecret : String(a.password);
      return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    }
    case 'jwt':
      return `Bearer ${await jwt(a.jwt, world)}`;
  }
}

async function body(b: BodyCase, world: World): Promise<{ headers: Record<string, string>; bytes?: Buffer }> {
  switch (b.kind) {
    case 'none':
      return { headers: {} };
    case 'json':
      return {
        headers: { 'content-type': 'application/json' },
        bytes: Buffer.from(await jsonText(b.value, world)),
      };
    case 'raw': {
      const headers: Record<string, string> = {};
      if (b.contentType !== undefined) headers['content-type'] = b.contentType;
      if (b.encoding !== undefined) headers['content-encoding'] = b.encoding;
      return { headers, bytes: Buffer.from(b.text, b.latin1 ? 'latin1' : 'utf8') };
    }
  }
}

/** The server closed the connection without an answer, or gave none within the timeout. */
export class NoAnswer extends Error {}

/** Makes the request a case describes against the world's resources. */
export async function execute(baseUrl: string, world: World, op: Operation, c: Case): Promise<Exchange> {
  // the scene every route may depend on without naming it: users who share a channel with messages
  await world.get('message.id');
  const pathRefs: RefName[] = [];
  let path = op.path;
  for (const [name, v] of Object.entries(c.path)) {
    if (v instanceof Ref) pathRefs.push(v.name);
    path = path.replace(`{${name}}`, await urlText(v, world, name === 'key'));
  }
  const query: string[] = [];
  for (const part of c.query) {
    const k = encodeText(part.name).replace(/%5B/g, '[').replace(/%5D/g, ']');
    query.push('value' in part ? `${k}=${await urlText(part.value, world)}` : k);
  }
  if (query.length) path += `?${query.join('&')}`;
  const auth = await authorization(c.auth, world);
  const b = await body(c.body, world);
  const request: RawRequest = {
    method: op.method.toUpperCase(),
    path,
    headers: { ...(auth === undefined ? {} : { authorization: auth }), ...b.headers },
    body: b.bytes,
  };
  let response: RawResponse;
  try {
    response = await rawRequest(baseUrl, request);
  } catch (err) {
    throw new NoAnswer(`${op.key} got no answer: ${String(err)}\n${describeExchange({ request })}`);
  }
  return { request, response, pathRefs };
}

const clip = (s: string, n = 1_500) => (s.length > n ? `${s.slice(0, n)}… (${s.length} characters)` : s);

/** The request and the answer, for a failure message someone can act on. */
export function describeExchange(x: { request: RawRequest; response?: RawResponse }): string {
  const { request, response } = x;
  const headers = Object.entries(request.headers).map(([k, v]) => `    ${k}: ${clip(v, 300)}`);
  const lines = [`  request: ${request.method} ${clip(request.path, 800)}`, ...headers];
  if (request.body) lines.push(`    body: ${clip(request.body.toString('utf8'))}`);
  if (response) lines.push(`  response: ${response.status} ${clip(response.text)}`);
  return lines.join('\n');
}

/**
 * What is wrong with an answer, or null: any 5xx; a 4xx whose body is not the contract's
 * `{error: {code, message, details?, request_id}}` (the request id the one of the X-Request-Id header).
 */
export function problemWith(res: RawResponse): string | null {
  if (res.status >= 500) return `answered ${res.status}`;
  if (res.status < 400) return null;
  const error = (res.json as { error?: Record<string, unknown> } | undefined)?.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') {
    return `answered ${res.status} without the contract's error body`;
  }
  if (error.details !== undefined && !Array.isArray(error.details))
    return `answered ${res.status} with details that are not a list`;
  const requestId = res.headers['x-request-id'];
  // Node's own parser refusals (431, garbled requests) are answered before any request id exists
  if (requestId !== undefined && error.request_id !== requestId) {
    return `answered ${res.status} with request_id ${String(error.request_id)}, not the X-Request-Id ${String(requestId)}`;
  }
  return null;
}
