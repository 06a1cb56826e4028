import { Controller, Get, Options, Put, Req, Res } from '@nestjs/common';
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
import { ApiErrors } from '../common/errors/api-errors';
import { UploadsService } from './uploads.service';

/** The body of the file routes: any bytes, with the type declared at presign. */
const BINARY = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };

/**
 * The HTTP side of the storage drivers: the local driver's signed upload and download routes and
 * `GET /files/<key>`, the default public URL of both drivers (the file itself for `local`, a
 * short-lived redirect into the bucket for `s3`). None needs credentials; the upload's and the
 * download's signature is their credential. UploadsService does the work.
 */
@ApiTags('attachments')
@Controller()
export class UploadsController {
  constructor(private readonly uploads: UploadsService) {}

  /** CORS preflight of a browser upload. */
  @Options('v1/uploads/*key')
  @Auth('public')
  @ApiExcludeEndpoint()
  preflight(@Res() res: Response): void {
    this.uploads.preflight(res);
  }

  /**
   * The local driver's presigned upload: exactly the declared Content-Type and Content-Length
   * (400 VALIDATION_ERROR otherwise), before `expires` (403 FORBIDDEN after it or with a bad signature).
   */
  @Put('v1/uploads/*key')
  @Auth('public')
  @ApiParam({
    name: 'key',
    type: String,
    description: 'The object key from presign (`<workspace>/<uuid>/<name>`)',
  })
  @ApiQuery({ name: 'expires', type: 'integer', description: 'Unix time the URL expires (signed)' })
  @ApiQuery({ name: 'size', type: 'integer', description: 'Declared size in bytes (signed)' })
  @ApiQuery({ name: 'type', type: String, description: 'Declared MIME type (signed)' })
  @ApiQuery({ name: 'sig', type: String, description: 'HMAC-SHA256 signature' })
  @ApiOperation({ operationId: 'uploadFile', summary: 'Upload a file to a presigned URL (local driver)' })
  @ApiConsumes('application/octet-stream')
  @ApiBody({
    description: 'The bytes, sent with the Content-Type declared at presign',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiOkResponse({
    description: 'Stored',
    headers: { ETag: { description: 'The stored object', schema: { type: 'string' } } },
  })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a Content-Type or Content-Length other than declared at presign, or fewer bytes than declared',
    403: 'FORBIDDEN: an expired or altered URL, or one whose workspace was deleted',
    404: 'NOT_FOUND: the storage driver is not local',
    413: 'ATTACHMENT_TOO_LARGE: over SERVICE_MAX_ATTACHMENT_SIZE_BYTES',
  })
  upload(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.uploads.upload(req, res);
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
  file(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.uploads.file(req, res);
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
  download(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.uploads.download(req, res);
  }
}
