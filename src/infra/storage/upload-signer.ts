import { createHmac, hkdfSync, timingSafeEqual } from 'crypto';

export interface UploadGrant {
  key: string;
  contentType: string;
  size: number;
  /** Unix seconds. */
  expires: number;
}

export type GrantCheck = { ok: true; grant: UploadGrant } | { ok: false; reason: 'invalid' | 'expired' };

/** A signed download of a stored object (the local driver's `GET /v1/downloads/<key>`). */
export interface DownloadGrant {
  key: string;
  contentType: string;
  filename: string;
  /** Unix seconds. */
  expires: number;
}

export type DownloadCheck = { ok: true; grant: DownloadGrant } | { ok: false; reason: 'invalid' | 'expired' };

/** Printable, no control characters: what a signed type or file name may be. */
const SIGNED_TEXT = /^[^\p{Cc}]{1,255}$/u;

/**
 * Signs and checks the local driver's upload URLs. The HMAC covers the key, the expiry, the declared
 * type and the declared size, so none of them can be changed without the service's key, which is
 * derived (HKDF) from SERVICE_ENCRYPTION_KEY and never used for anything else. Download URLs are
 * signed with the same key over the method (`GET`, where uploads sign `PUT`), the key, the expiry,
 * the type and the file name they answer with: neither kind of signature passes for the other.
 */
export class UploadSigner {
  private readonly key: Buffer;

  constructor(encryptionKey: Buffer) {
    this.key = Buffer.from(
      hkdfSync('sha256', encryptionKey, Buffer.alloc(0), 'chat-service/local-uploads/v1', 32),
    );
  }

  /** The query string (without `?`) of an upload URL. */
  query(g: UploadGrant): string {
    const q = new URLSearchParams({
      expires: String(g.expires),
      size: String(g.size),
      type: g.contentType,
      sig: this.mac(g),
    });
    return q.toString();
  }

  check(key: string, query: Record<string, unknown>, nowSeconds = Math.floor(Date.now() / 1000)): GrantCheck {
    const { expires, size, type, sig } = query;
    if (
      typeof expires !== 'string' ||
      typeof size !== 'string' ||
      typeof type !== 'string' ||
      typeof sig !== 'string'
    ) {
      return { ok: false, reason: 'invalid' };
    }
    if (!/^\d{1,12}$/.test(expires) || !/^\d{1,15}$/.test(size) || type.length > 255)
      return { ok: false, reason: 'invalid' };
    const grant: UploadGrant = { key, contentType: type, size: Number(size), expires: Number(expires) };
    const expected = Buffer.from(this.mac(grant));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: 'invalid' };
    if (grant.expires < nowSeconds) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  /** The query string (without `?`) of a download URL. */
  downloadQuery(g: DownloadGrant): string {
    return new URLSearchParams({
      expires: String(g.expires),
      type: g.contentType,
      name: g.filename,
      sig: this.downloadMac(g),
    }).toString();
  }

  checkDownload(
    key: string,
    query: Record<string, unknown>,
    nowSeconds = Math.floor(Date.now() / 1000),
  ): DownloadCheck {
    const { expires, type, name, sig } = query;
    if (
      typeof expires !== 'string' ||
      typeof type !== 'string' ||
      typeof name !== 'string' ||
      typeof sig !== 'string'
    ) {
      return { ok: false, reason: 'invalid' };
    }
    if (!/^\d{1,12}$/.test(expires) || !SIGNED_TEXT.test(type) || !SIGNED_TEXT.test(name))
      return { ok: false, reason: 'invalid' };
    const grant: DownloadGrant = { key, contentType: type, filename: name, expires: Number(expires) };
    if (!this.same(sig, this.downloadMac(grant))) return { ok: false, reason: 'invalid' };
    if (grant.expires < nowSeconds) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  private same(given: string, expected: string): boolean {
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private downloadMac(g: DownloadGrant): string {
    return createHmac('sha256', this.key)
      .update(['GET', g.key, String(g.expires), g.contentType, g.filename].join('\n'))
      .digest('base64url');
  }

  private mac(g: UploadGrant): string {
    return createHmac('sha256', this.key)
      .update(['PUT', g.key, String(g.expires), g.contentType, String(g.size)].join('\n'))
      .digest('base64url');
  }
}
