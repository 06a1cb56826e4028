import { Controller, Get, Inject, Logger, Options, Put, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExcludeEndpoint,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { AppError } from '../common/errors/app-error';
import { ApiErrors } from '../common/errors/api-errors';
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

/** The signed-URL routes below: they answer any origin themselves, outside the API's CORS allow-list. */
export function isSignedUrlPath(path: string): boolean {
  return path.startsWith(UPLOADS_PREFIX) || path.startsWith(FILES_PREFIX) || path.startsWith(DOWNLOADS_PREFIX);
}

/** The body of the file routes: any bytes, with the type declared at presign. */
const BINARY = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };

/** Signed URLs carry no cookies or credentials: any origin may use them (browser uploads, <img>). */
function allowAnyOrigin(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
}

/**
 * The HTTP side of the storage drivers: the local driver's signed upload and download routes and
 * `GET /files/<key>`, the default public URL of both drivers (the file itself for `local`, a
 * short-lived redirect into the bucket for `s3`). None needs credentials; the upload's and the
 * download's signature is their credential. Keys are parsed from the raw path segment by segment, so a `..%2f` can never
 * turn into a path.
 */
@ApiTags('attachments')
@Controller()
export class UploadsController {
  private readonly logger = new Logger('Uploads');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storage: ObjectStorage,
    private readonly uploads: AttachmentsRepository,
  ) {}

  /** CORS preflight of a browser upload. */
  @Options('v1/uploads/*key')
  @Auth('public')
  @ApiExcludeEndpoint()
  preflight(@Res() res: Response): void {
    allowAnyOrigin(res);
    res.setHeader('Access-Control-Allow-Methods', 'PUT');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  }

  /**
   * The local driver's presigned upload: exactly the declared Content-Type and Content-Length
   * (400 VALIDATION_ERROR otherwise), before `expires` (403 FORBIDDEN after it or with a bad signature).
   */
  @Put('v1/uploads/*key')
  @Auth('public')
  @ApiParam({ name: 'key', type: String, description: 'The object key from presign (`<workspace>/<uuid>/<name>`)' })
  @ApiQuery({ name: 'expires', type: 'integer', description: 'Unix time the URL expires (signed)' })
  @ApiQuery({ name: 'size', type: 'integer', description: 'Declared size in bytes (signed)' })
  @ApiQuery({ name: 'type', type: String, description: 'Declared MIME type (signed)' })
  @ApiQuery({ name: 'sig', type: String, description: 'HMAC-SHA256 signature' })
  @ApiOperation({ operationId: 'uploadFile', summary: 'Upload a file to a presigned URL (local driver)' })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ description: 'The bytes, sent with the Content-Type declared at presign', schema: { type: 'string', format: 'binary' } })
  @ApiOkResponse({ description: 'Stored', headers: { ETag: { description: 'The stored object', schema: { type: 'string' } } } })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a Content-Type or Content-Length other than declared at presign, or fewer bytes than declared',
    403: 'FORBIDDEN: an expired or altered URL, or one whose workspace was deleted',
    404: 'NOT_FOUND: the storage driver is not local',
    413: 'ATTACHMENT_TOO_LARGE: over SERVICE_MAX_ATTACHMENT_SIZE_BYTES',
  })
  async upload(@Req() req: Request, @Res() res: Response): Promise<void> {
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
    if (!(await this.uploads.findByKey(key))) throw new AppError('FORBIDDEN', 'This upload is no longer valid');

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
   * A stored file with its declared Content-Type, `X-Content-Type-Options: nosniff`, a sandboxing
   * CSP, and `Content-Disposition: attachment` for everything that is not an image.
   */
  @Get('files/*key')
  @Auth('public')
  @ApiParam({ name: 'key', type: String, description: 'The object key' })
  @ApiOperation({ operationId: 'getFile', summary: 'Get a stored file' })
  @ApiOkResponse({ description: 'The file, with its declared Content-Type (local driver)', content: BINARY })
  @ApiFoundResponse({
    description: 'A short-lived signed GET in the bucket (s3 driver)',
    headers: { Location: { description: 'The signed URL', schema: { type: 'string', format: 'uri' } } },
  })
  @ApiErrors({ 404: 'NOT_FOUND: no such file' })
  async file(@Req() req: Request, @Res() res: Response): Promise<void> {
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
    const headers: Record<string, string> = {
      'Content-Type': row.mime_type,
      'Content-Disposition': contentDisposition(row.mime_type, row.filename),
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cache-Control': 'public, max-age=86400',
    };
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    const storage = this.storage as LocalObjectStorage;
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
        reject(AppError.notFound('File'));
      });
    });
  }

  /**
   * The local driver's signed download (user exports' `download_url`): the object with the signed
   * Content-Type and an attachment disposition, until `expires` (403 FORBIDDEN after it or with a bad
   * signature; 404 once the object is gone).
   */
  @Get('v1/downloads/*key')
  @Auth('public')
  @ApiParam({ name: 'key', type: String, description: 'The object key' })
  @ApiQuery({ name: 'expires', type: 'integer', description: 'Unix time the URL expires (signed)' })
  @ApiQuery({ name: 'type', type: String, description: 'The Content-Type of the answer (signed)' })
  @ApiQuery({ name: 'name', type: String, description: 'The file name of the answer (signed)' })
  @ApiQuery({ name: 'sig', type: String, description: 'HMAC-SHA256 signature' })
  @ApiOperation({ operationId: 'downloadFile', summary: 'Download through a signed URL (local driver)' })
  @ApiOkResponse({ description: 'The object, with the signed Content-Type', content: BINARY })
  @ApiErrors({
    403: 'FORBIDDEN: an expired or altered URL',
    404: 'NOT_FOUND: no such object, or the storage driver is not local',
  })
  async download(@Req() req: Request, @Res() res: Response): Promise<void> {
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
    const headers: Record<string, string> = {
      'Content-Type': contentType,
      'Content-Disposition': contentDisposition(contentType, filename),
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cache-Control': 'private, no-store',
    };
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    await new Promise<void>((resolve, reject) => {
      res.sendFile(key, { root: storage.filesDir, dotfiles: 'deny' }, (err?: Error) => {
        if (!err) return resolve();
        if (res.headersSent) {
          res.destroy();
          return resolve();
        }
        for (const k of Object.keys(headers)) res.removeHeader(k);
        reject(AppError.notFound('Download'));
      });
    });
  }
}
