import { randomBytes } from 'crypto';
import { UploadSigner } from './upload-signer';

describe('UploadSigner', () => {
  const signer = new UploadSigner(randomBytes(32));
  const grant = { key: 'w/u/cat.png', contentType: 'image/png', size: 68, expires: 2_000_000_000 };
  const parse = (q: string) => Object.fromEntries(new URLSearchParams(q));

  it('accepts its own URL until it expires', () => {
    const q = parse(signer.query(grant));
    expect(signer.check(grant.key, q, grant.expires - 1)).toEqual({ ok: true, grant });
    expect(signer.check(grant.key, q, grant.expires)).toEqual({ ok: true, grant });
    expect(signer.check(grant.key, q, grant.expires + 1)).toEqual({ ok: false, reason: 'expired' });
  });

  it('binds key, expiry, type and size', () => {
    const q = parse(signer.query(grant));
    const now = grant.expires - 100;
    expect(signer.check('w/u/dog.png', q, now).ok).toBe(false);
    expect(signer.check(grant.key, { ...q, expires: String(grant.expires + 1) }, now).ok).toBe(false);
    expect(signer.check(grant.key, { ...q, type: 'text/html' }, now).ok).toBe(false);
    expect(signer.check(grant.key, { ...q, size: '69' }, now).ok).toBe(false);
    expect(signer.check(grant.key, { ...q, sig: undefined }, now).ok).toBe(false);
    expect(signer.check(grant.key, { ...q, size: ['68', '68'] }, now).ok).toBe(false);
  });

  it('does not accept another key’s signature', () => {
    const other = new UploadSigner(randomBytes(32));
    expect(other.check(grant.key, parse(signer.query(grant)), 0)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('UploadSigner download grants', () => {
  const signer = new UploadSigner(randomBytes(32));
  const grant = {
    key: 'exports/w/e.json',
    contentType: 'application/json',
    filename: 'e.json',
    expires: 2_000_000_000,
  };
  const parse = (q: string) => Object.fromEntries(new URLSearchParams(q));

  it('accepts its own URL until it expires', () => {
    const q = parse(signer.downloadQuery(grant));
    expect(signer.checkDownload(grant.key, q, grant.expires)).toEqual({ ok: true, grant });
    expect(signer.checkDownload(grant.key, q, grant.expires + 1)).toEqual({ ok: false, reason: 'expired' });
  });

  it('binds key, expiry, type and file name', () => {
    const q = parse(signer.downloadQuery(grant));
    const now = grant.expires - 100;
    expect(signer.checkDownload('exports/w/f.json', q, now).ok).toBe(false);
    expect(signer.checkDownload(grant.key, { ...q, expires: String(grant.expires + 1) }, now).ok).toBe(false);
    expect(signer.checkDownload(grant.key, { ...q, type: 'text/html' }, now).ok).toBe(false);
    expect(signer.checkDownload(grant.key, { ...q, name: 'x.html' }, now).ok).toBe(false);
    expect(signer.checkDownload(grant.key, { ...q, name: 'a\nb' }, now).ok).toBe(false);
    expect(signer.checkDownload(grant.key, { ...q, sig: undefined }, now).ok).toBe(false);
  });

  it('an upload signature is no download signature, and the other way round', () => {
    const upload = { key: grant.key, contentType: grant.contentType, size: 10, expires: grant.expires };
    const up = parse(signer.query(upload));
    expect(signer.checkDownload(grant.key, { ...up, name: grant.filename }, 0).ok).toBe(false);
    const down = parse(signer.downloadQuery(grant));
    expect(signer.check(grant.key, { ...down, size: '10' }, 0).ok).toBe(false);
  });
});
