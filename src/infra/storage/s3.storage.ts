import {
  AbortMultipartUploadCommand,
  CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'stream';
import type { AppConfig } from '../../config/config.schema';
import {
  contentDisposition,
  ObjectServing,
  ObjectStorage,
  PresignedGet,
  PresignedPut,
  PresignGetInput,
  PresignPutInput,
  ServeTarget,
} from './object-storage';

/** How long the redirect of `GET /files/<key>` to the bucket stays valid. */
const GET_URL_SECONDS = 300;

/** S3's smallest part (every part but the last must be at least this). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** The part size of streamed uploads: at most one part is buffered at a time. */
const PART_BYTES = 8 * 1024 * 1024;
/** S3's limit on parts per upload: 10,000 parts of 8 MiB is 80 GiB. */
const MAX_PARTS = 10_000;

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
    /** Bytes per part of `putStream` (tests use S3's 5 MiB minimum). */
    private readonly partBytes = PART_BYTES,
  ) {
    super();
    if (partBytes < MIN_PART_BYTES) throw new Error(`parts must be at least ${MIN_PART_BYTES} bytes`);
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

  /**
   * A multipart upload with the SDK's own commands (`@aws-sdk/lib-storage` is not a dependency):
   * the body is cut into parts of `partBytes`, each sent before the next is read, so one part is in
   * memory at a time. A body shorter than one part is a single PutObject. On failure the multipart
   * upload is aborted (nothing is left under the key; the store drops the parts).
   */
  async putStream(key: string, body: Readable, contentType: string): Promise<number> {
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let size = 0;
    const flush = async (): Promise<void> => {
      const chunk = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      if (!uploadId) {
        const created = await this.client.send(
          new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
        );
        if (!created.UploadId) throw new Error('the store answered no UploadId');
        uploadId = created.UploadId;
      }
      const PartNumber = parts.length + 1;
      if (PartNumber > MAX_PARTS) throw new Error(`more than ${MAX_PARTS} parts`);
      const part = await this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber,
          Body: chunk,
          ContentLength: chunk.length,
        }),
      );
      parts.push({ PartNumber, ETag: part.ETag });
    };
    try {
      for await (const data of body as AsyncIterable<Buffer | string>) {
        const chunk = typeof data === 'string' ? Buffer.from(data) : data;
        pending.push(chunk);
        pendingBytes += chunk.length;
        size += chunk.length;
        if (pendingBytes >= this.partBytes) await flush();
      }
      if (!uploadId) {
        const whole = Buffer.concat(pending, pendingBytes);
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: whole,
            ContentType: contentType,
            ContentLength: whole.length,
          }),
        );
        return size;
      }
      if (pendingBytes > 0) await flush();
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      return size;
    } catch (err) {
      body.destroy();
      if (uploadId) {
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined); // the bucket's lifecycle rule for incomplete uploads is the backstop
      }
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** A presigned GetObject that answers with the given type and disposition (`attachment` unless an image). */
  async presignGet(input: PresignGetInput): Promise<PresignedGet> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: input.key,
      ResponseContentType: input.contentType,
      ResponseContentDisposition: contentDisposition(input.contentType, input.filename),
    });
    return {
      url: await getSignedUrl(this.client, command, { expiresIn: input.expiresInSeconds }),
      expiresAt: new Date(Date.now() + input.expiresInSeconds * 1000),
    };
  }

  close(): void {
    this.client.destroy();
  }
}
