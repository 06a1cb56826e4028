import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'dns';
import http from 'http';
import https from 'https';
import { isIP } from 'net';
import { StringDecoder } from 'string_decoder';
import { classifyAddress, isLocalHostname } from './address-policy';

export interface OutboundPost {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  /** How much of the response body to keep (whole UTF-8 characters only). */
  keepBytes: number;
  /** Private targets allowed for this request too (the policy the webhook was registered under). */
  allowPrivateNetworks?: boolean;
}

export type OutboundResult =
  | { kind: 'response'; status: number; body: string; durationMs: number }
  | { kind: 'error'; error: string; durationMs: number };

export interface OutboundGet {
  url: string;
  headers: Record<string, string>;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  /** Read at most this much of the body (the rest is not read). */
  maxBytes: number;
  maxRedirects: number;
  /** Whether a Content-Type (lowercase, parameters removed) is wanted; the body of any other is not read. */
  accept: (contentType: string) => boolean;
  /** Private targets allowed or not for this request (a link's preview: the policy it was written under); default this instance's. */
  allowPrivateNetworks?: boolean;
}

export type FetchResult =
  | { kind: 'page'; url: string; status: number; contentType: string; body: Buffer }
  /** The address policy refused the URL or a redirect's target. */
  | { kind: 'refused'; error: string }
  /** Anything else: a network error, the deadline, an error status, an unwanted type, too many redirects. */
  | { kind: 'failed'; error: string };

/** Raised when a target is refused by the address policy (before any byte is sent). */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** How long a response body is drained after the kept part, so the connection can be reused. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_LIMIT_MS = 2_000;

/**
 * POSTs to untrusted URLs: http(s) only, no redirects followed, an overall deadline, and, unless
 * private networks are allowed, no connection to a loopback, private, link-local, CGNAT, metadata or
 * otherwise special address. The check runs in the socket's own DNS lookup, on the addresses the
 * socket then connects to, so a name that resolves differently the second time (DNS rebinding)
 * cannot slip through; IP literals (which skip the lookup) are checked before connecting.
 */
export class SafeHttpClient {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  // permissive requests keep their own sockets, so a strict request never reuses one of theirs
  private readonly permissiveHttpAgent: http.Agent;
  private readonly permissiveHttpsAgent: https.Agent;

  constructor(
    private readonly allowPrivateNetworks: boolean,
    maxSockets = 64,
    /** Why an address is refused, or null (address-policy.ts; a test may draw the line elsewhere). */
    private readonly policy: (address: string) => string | null = classifyAddress,
  ) {
    // keep-alive sockets were checked when they connected; Node honours the server's Keep-Alive hint
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets, timeout: 5_000, scheduling: 'lifo' });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets, timeout: 5_000, scheduling: 'lifo' });
    this.permissiveHttpAgent = new http.Agent({
      keepAlive: true,
      maxSockets,
      timeout: 5_000,
      scheduling: 'lifo',
    });
    this.permissiveHttpsAgent = new https.Agent({
      keepAlive: true,
      maxSockets,
      timeout: 5_000,
      scheduling: 'lifo',
    });
  }

  get allowsPrivateNetworks(): boolean {
    return this.allowPrivateNetworks;
  }

  /** Null when the target may be contacted, else why not (no network access; for literals and names like localhost). */
  staticRefusal(url: URL, allowPrivate = this.allowPrivateNetworks): string | null {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return `the scheme ${url.protocol} is not allowed (http or https only)`;
    if (allowPrivate) return null;
    const host = bareHost(url.hostname);
    if (isIP(host)) {
      const reason = this.policy(host);
      return reason ? `${host} is ${reason}` : null;
    }
    if (isLocalHostname(host)) return `${host} is a loopback name`;
    return null;
  }

  /**
   * Why a target URL given by an integrator (a webhook's, the pre-send hook's) cannot be used, or null:
   * not an absolute http(s) URL with a host, or refused by the address policy (resolveRefusal).
   */
  async targetProblem(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      return 'must be an absolute http or https URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return `must use http or https, not ${url.protocol}`;
    if (!url.hostname) return 'must name a host';
    const refusal = await this.resolveRefusal(url);
    return refusal ? `${refusal}; targets on private networks are not allowed on this server` : null;
  }

  /** Resolves the host the way a delivery would and returns why it is refused, or null. DNS failures are not refusals. */
  async resolveRefusal(url: URL, timeoutMs = 3_000): Promise<string | null> {
    const early = this.staticRefusal(url);
    if (early || this.allowPrivateNetworks) return early;
    const host = bareHost(url.hostname);
    if (isIP(host)) return null;
    const addresses = await new Promise<LookupAddress[]>((resolve) => {
      const timer = setTimeout(() => resolve([]), timeoutMs);
      dnsLookup(host, { all: true, verbatim: true }, (err, found) => {
        clearTimeout(timer);
        resolve(err ? [] : found);
      });
    });
    for (const a of addresses) {
      const reason = this.policy(a.address);
      if (reason) return `${host} resolves to ${a.address}, ${reason}`;
    }
    return null;
  }

  async post(req: OutboundPost): Promise<OutboundResult> {
    const started = Date.now();
    const fail = (error: string): OutboundResult => ({
      kind: 'error',
      error,
      durationMs: Date.now() - started,
    });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return fail('invalid URL');
    }
    const permissive = this.allowPrivateNetworks || req.allowPrivateNetworks === true;
    const refusal = this.staticRefusal(url, permissive);
    if (refusal) return fail(`refused: ${refusal}`);
    const secure = url.protocol === 'https:';
    const lib = secure ? https : http;

    return new Promise<OutboundResult>((resolve) => {
      let settled = false;
      const finish = (r: OutboundResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(r);
      };
      const request = lib.request({
        method: 'POST',
        protocol: url.protocol,
        hostname: bareHost(url.hostname),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        auth: url.username
          ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
          : undefined,
        headers: { ...req.headers, 'Content-Length': String(req.body.length) },
        agent: permissive
          ? secure
            ? this.permissiveHttpsAgent
            : this.permissiveHttpAgent
          : secure
            ? this.httpsAgent
            : this.httpAgent,
        lookup: permissive ? undefined : this.guardedLookup,
      });
      const deadline = setTimeout(() => {
        request.destroy(new Error(`timed out after ${req.timeoutMs} ms`));
      }, req.timeoutMs);

      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const decoder = new StringDecoder('utf8');
        let kept = '';
        let keptBytes = 0;
        let total = 0;
        const done = () =>
          finish({
            kind: 'response',
            status,
            body: kept.replaceAll('\u0000', ''),
            durationMs: Date.now() - started,
          });
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (keptBytes < req.keepBytes) {
            const slice = chunk.subarray(0, req.keepBytes - keptBytes);
            keptBytes += slice.length;
            kept += decoder.write(slice);
            if (keptBytes >= req.keepBytes) {
              done();
              // drain a little more so the socket can be reused, then give up on it
              const stop = setTimeout(() => res.destroy(), DRAIN_LIMIT_MS);
              res.once('close', () => clearTimeout(stop));
            }
          }
          if (total > req.keepBytes + DRAIN_LIMIT_BYTES) res.destroy();
        });
        res.on('end', () => {
          kept += decoder.end();
          done();
        });
        res.on('error', () => done());
        res.on('aborted', () => done());
      });
      request.on('error', (err: NodeJS.ErrnoException) => finish(fail(describeError(err))));
      request.end(req.body);
    });
  }

  /**
   * GETs an untrusted URL: the same address policy as `post`, checked again for every redirect's target
   * (at most `maxRedirects`, resolved against the URL that redirected), one deadline for all of it, and
   * only a 2xx of an accepted type is read, up to `maxBytes`.
   */
  async get(req: OutboundGet): Promise<FetchResult> {
    const deadline = Date.now() + req.timeoutMs;
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { kind: 'failed', error: 'invalid URL' };
    }
    const permissive = req.allowPrivateNetworks ?? this.allowPrivateNetworks;
    for (let hop = 0; ; hop++) {
      const refusal = this.staticRefusal(url, permissive);
      if (refusal) return { kind: 'refused', error: refusal };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'failed', error: `timed out after ${req.timeoutMs} ms` };
      const r = await this.getOnce(url, req, left, permissive);
      if (r.kind !== 'redirect') return r;
      if (hop >= req.maxRedirects)
        return { kind: 'failed', error: `more than ${req.maxRedirects} redirects` };
      try {
        url = new URL(r.location, url);
      } catch {
        return { kind: 'failed', error: 'a redirect to an invalid URL' };
      }
    }
  }

  private getOnce(
    url: URL,
    req: OutboundGet,
    timeoutMs: number,
    permissive: boolean,
  ): Promise<FetchResult | { kind: 'redirect'; location: string }> {
    const secure = url.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: FetchResult | { kind: 'redirect'; location: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const request = (secure ? https : http).request({
        method: 'GET',
        protocol: url.protocol,
        hostname: bareHost(url.hostname),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: req.headers,
        agent: permissive
          ? secure
            ? this.permissiveHttpsAgent
            : this.permissiveHttpAgent
          : secure
            ? this.httpsAgent
            : this.httpAgent,
        lookup: permissive ? undefined : this.guardedLookup,
      });
      const timer = setTimeout(
        () => request.destroy(new Error(`timed out after ${req.timeoutMs} ms`)),
        timeoutMs,
      );
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.resume();
          return finish({ kind: 'redirect', location });
        }
        const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (status < 200 || status >= 300 || !req.accept(type)) {
          res.destroy();
          return finish({
            kind: 'failed',
            error: status < 200 || status >= 300 ? `answered ${status}` : `type ${type || 'none'}`,
          });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish({
            kind: 'page',
            url: url.toString(),
            status,
            contentType: type,
            body: Buffer.concat(chunks),
          });
        res.on('data', (chunk: Buffer) => {
          const room = req.maxBytes - size;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          size += chunk.length;
          if (size >= req.maxBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('aborted', done);
      });
      request.on('error', (err: NodeJS.ErrnoException) =>
        finish(
          err instanceof BlockedAddressError
            ? { kind: 'refused', error: err.message }
            : { kind: 'failed', error: describeError(err) },
        ),
      );
      request.end();
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
    this.permissiveHttpAgent.destroy();
    this.permissiveHttpsAgent.destroy();
  }

  /** dns.lookup, refusing the whole name when any address it resolves to is not public. */
  private readonly guardedLookup = (
    hostname: string,
    options: LookupOptions,
    callback: LookupCallback,
  ): void => {
    if (isLocalHostname(hostname)) {
      callback(new BlockedAddressError(`refused: ${hostname} is a loopback name`), '', 4);
      return;
    }
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      for (const a of addresses) {
        const reason = this.policy(a.address);
        if (reason)
          return callback(
            new BlockedAddressError(`refused: ${hostname} resolves to ${a.address}, ${reason}`),
            '',
            4,
          );
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      return callback(null, first.address, first.family);
    });
  };
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function describeError(err: NodeJS.ErrnoException): string {
  if (err instanceof BlockedAddressError) return err.message;
  const code = err.code && !err.message.includes(err.code) ? `${err.code}: ` : '';
  return `${code}${err.message}`.slice(0, 500);
}
