import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { AppConfig } from '../../config/config.schema';
import {
  contentDisposition,
  ObjectServing,
  ObjectStorage,
  PresignedPut,
  PresignPutInput,
  ServeTarget,
} from './object-storage';

/** How long the redirect of `GET /files/<key>` to the bucket stays valid. */
const GET_URL_SECONDS = 300;

export function createS3Client(config: AppConfig): S3Client {
  return new S3Client({
    region: config.SERVICE_S3_REGION,
    endpoint: config.SERVICE_S3_ENDPOINT,
    forcePathStyle: config.SERVICE_S3_FORCE_PATH_STYLE,
    credentials:
      config.SERVICE_S3_ACCESS_KEY_ID && config.SERVICE_S3_SECRET_ACCESS_KEY
        ? {
            accessKeyId: config.SERVICE_S3_ACCESS_KEY_ID,
            secretAccessKey: config.SERVICE_S3_SECRET_ACCESS_KEY,
          }
        : undefined, // the SDK's default chain: environment, profile, instance role
    // no CRC32 checksum parameters in presigned URLs: browsers and most S3-compatible stores cannot honour them
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * Any S3-compatible store (AWS, MinIO, R2, ...). The presigned PUT signs `content-type` and
 * `content-length` as headers, so the store refuses a body of another type or size; the URL expires
 * after `expiresInSeconds`. Files are public at SERVICE_S3_PUBLIC_URL (a bucket policy or CDN); when
 * that is left at its default `{base_url}/files/`, this service redirects there with a short-lived GET.
 */
export class S3ObjectStorage extends ObjectStorage {
  readonly driver = 's3' as const;

  constructor(
    private readonly config: AppConfig,
    readonly client: S3Client = createS3Client(config),
  ) {
    super();
  }

  private get bucket(): string {
    return this.config.SERVICE_S3_BUCKET!;
  }

  async presignPut(input: PresignPutInput): Promise<PresignedPut> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: input.key,
      ContentType: input.contentType,
      ContentLength: input.contentLength,
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: input.expiresInSeconds,
      // keep both as signed headers (not hoisted into the query), so the store checks what is sent
      signableHeaders: new Set(['content-type', 'content-length']),
      unhoistableHeaders: new Set(['content-type', 'content-length']),
    });
    return {
      url,
      headers: { 'Content-Type': input.contentType },
      expiresAt: new Date(Date.now() + input.expiresInSeconds * 1000),
    };
  }

  async serve(key: string, serving: ObjectServing): Promise<ServeTarget> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: serving.contentType,
      ResponseContentDisposition: contentDisposition(serving.contentType, serving.filename),
    });
    return {
      kind: 'redirect',
      url: await getSignedUrl(this.client, command, { expiresIn: GET_URL_SECONDS }),
    };
  }

  close(): void {
    this.client.destroy();
  }
}
