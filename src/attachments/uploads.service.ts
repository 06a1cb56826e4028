import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { DOWNLOADS_PREFIX, LocalObjectStorage, UploadSizeError } from '../infra/storage/local.storage';
import {
  contentDisposition,
  decodeDownloadKeyPath,
  decodeKeyPath,
  ObjectStorage,
} from '../infra/storage/object-storage';
import { AttachmentsRepository } from './attachments.repository';
import { normalizeMimeType } from './attachments.service';

export const UPLOADS_PREFIX = '/v1/uploads/';
const FILES_PREFIX = '/files/';

/** The signed-URL routes of UploadsController: they answer any origin themselves, outside the API's CORS allow-list. */
export function isSignedUrlPath(path: string): boolean {
  return (
    path.startsWith(UPLOADS_PREFIX) || path.startsWith(FILES_PREFIX) || path.startsWith(DOWNLOADS_PREFIX)
  );
}

/** What a stored file or a download may do in a browser: nothing. */
const SANDBOX_CSP = "default-src 'none'; sandbox";

/** Signed URLs carry no cookies or credentials: any origin may use them (browser uploads, <img>). */
function allowAnyOrigin(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
}

/**
 * The HTTP side of the storage drivers, behind UploadsController: the local driver's signed upload
 * and download routes and `GET /files/<key>`. Each method answers on `res` itself (a stream in, a file
 * or a redirect out). Keys are parsed from the raw path segment by segment, so a `..%2f` can never
 * turn into a path.
 */
@Injectable()
export class UploadsService {
  private readonly logger = new Logger('Uploads');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storage: ObjectStorage,
    private readonly uploads: AttachmentsRepository,
  ) {}

  /** The CORS preflight of a browser upload: PUT with a Content-Type, from any origin. */
  preflight(res: Response): void {
    allowAnyOrigin(res);
    res.setHeader('Access-Control-Allow-Methods', 'PUT');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  }

  /**
   * Stores the body of a signed upload: 404 unless the driver is local; then (with any origin
   * allowed) 403 for a bad key, signature, expiry or a presign record that is gone, 400 for a
   * Content-Type or Content-Length other than signed, 413 over the size limit, 400 for a body of
   * another length. A client that aborts gets no answer. Answers 200 with the ETag.
   */
  async upload(req: Request, res: Response): Promise<void> {
    const storage = this.storage;
    if (!(storage instanceof LocalObjectStorage)) throw AppError.notFound('Upload');
    allowAnyOrigin(res);
    const key = decodeKeyPath(req.path.slice(UPLOADS_PREFIX.length));
    if (!key) throw new AppError('FORBIDDEN', 'Invalid upload URL');
    const check = storage.signer.check(key, req.query);
    if (!check.ok)
      throw new AppError(
        'FORBIDDEN',
        check.reason === 'expired' ? 'This upload URL has expired' : 'Invalid upload URL',
      );
    const grant = check.grant;
    // the presign record goes with its workspace: a deleted workspace's URLs store nothing
    if (!(await this.uploads.findByKey(key)))
      throw new AppError('FORBIDDEN', 'This upload is no longer valid');

    const type = normalizeMimeType(req.headers['content-type'] ?? '');
    if (type !== grant.contentType)
      throw AppError.validation('Content-Type', `must be ${grant.contentType}, as declared at presign`);
    const length = req.headers['content-length'];
    if (length === undefined || !/^\d{1,15}$/.test(length) || Number(length) !== grant.size) {
      throw AppError.validation('Content-Length', `must be ${grant.size}, as declared at presign`);
    }
    if (grant.size > this.config.SERVICE_MAX_ATTACHMENT_SIZE_BYTES)
      throw new AppError('ATTACHMENT_TOO_LARGE');

    let etag: string;
    try {
      etag = await storage.receive(key, req, grant.size);
    } catch (err) {
      if (err instanceof UploadSizeError) throw AppError.validation('body', err.message);
      if (req.destroyed || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.warn(`upload of ${key} aborted by the client`);
        res.destroy();
        return;
      }
      throw err;
    }
    await this.uploads.markUploaded(key);
    res.setHeader('ETag', etag);
    res.status(200).end();
  }

  /**
   * `GET /files/<key>`: 404 unless the key was presigned and its object exists; then (from any
   * origin, nosniff) a short-lived redirect into the bucket, or the local file with its declared
   * type, its disposition, a sandboxing CSP and a day of caching.
   */
  async file(req: Request, res: Response): Promise<void> {
    const key = decodeKeyPath(req.path.slice(FILES_PREFIX.length));
    const row = key ? await this.uploads.findByKey(key) : null;
    const target =
      key && row
        ? await this.storage.serve(key, { contentType: row.mime_type, filename: row.filename })
        : null;
    if (!key || !row || !target) throw AppError.notFound('File');

    allowAnyOrigin(res);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (target.kind === 'redirect') {
      res.setHeader('Cache-Control', 'private, max-age=60');
      res.redirect(302, target.url);
      return;
    }
    const storage = this.storage as LocalObjectStorage;
    await sendStoredFile(
      res,
      storage,
      key,
      {
        'Content-Type': row.mime_type,
        'Content-Disposition': contentDisposition(row.mime_type, row.filename),
        'Content-Security-Policy': SANDBOX_CSP,
        'Cache-Control': 'public, max-age=86400',
      },
      'File',
    );
  }

  /**
   * A signed download: 404 unless the driver is local, 403 for a bad key, signature or expiry; then
   * (from any origin) the object with the signed type and file name, never cached; 404 once it is gone.
   */
  async download(req: Request, res: Response): Promise<void> {
    const storage = this.storage;
    if (!(storage instanceof LocalObjectStorage)) throw AppError.notFound('Download');
    const key = decodeDownloadKeyPath(req.path.slice(DOWNLOADS_PREFIX.length));
    if (!key) throw new AppError('FORBIDDEN', 'Invalid download URL');
    const check = storage.signer.checkDownload(key, req.query);
    if (!check.ok)
      throw new AppError(
        'FORBIDDEN',
        check.reason === 'expired' ? 'This download URL has expired' : 'Invalid download URL',
      );
    const { contentType, filename } = check.grant;
    allowAnyOrigin(res);
    await sendStoredFile(
      res,
      storage,
      key,
      {
        'Content-Type': contentType,
        'Content-Disposition': contentDisposition(contentType, filename),
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': SANDBOX_CSP,
        'Cache-Control': 'private, no-store',
      },
      'Download',
    );
  }
}

/**
 * Sends the local file of `key` with `headers`. A failure once bytes went out cuts the connection; a
 * failure before (no such file) takes `headers` back off and is a 404 `<what> not found`.
 */
async function sendStoredFile(
  res: Response,
  storage: LocalObjectStorage,
  key: string,
  headers: Record<string, string>,
  what: string,
): Promise<void> {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  await new Promise<void>((resolve, reject) => {
    // root + relative path: `send` refuses to leave the root and only checks the key's own segments for
    // dotfiles (express URI-encodes the path itself and `send` decodes it)
    res.sendFile(key, { root: storage.filesDir, dotfiles: 'deny' }, (err?: Error) => {
      if (!err) return resolve();
      if (res.headersSent) {
        res.destroy();
        return resolve();
      }
      for (const k of Object.keys(headers)) res.removeHeader(k);
      reject(AppError.notFound(what));
    });
  });
}
