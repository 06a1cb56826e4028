import { Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'crypto';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'fs';
import { mkdir, rename, rm, stat } from 'fs/promises';
import { tmpdir } from 'os';
import { dirname, join, resolve, sep } from 'path';
import type { Readable } from 'stream';
import { Transform } from 'stream';
import { pipeline } from 'stream/promises';
import type { AppConfig } from '../../config/config.schema';
import {
  encodeKey,
  ObjectServing,
  ObjectStorage,
  PresignedGet,
  PresignedPut,
  PresignGetInput,
  PresignPutInput,
  ServeTarget,
} from './object-storage';
import { UploadGrant, UploadSigner } from './upload-signer';

export class UploadSizeError extends Error {}

export const DOWNLOADS_PREFIX = '/v1/downloads/';

/**
 * The default driver: files under `${SERVICE_DATA_DIR}/files`, uploaded with a signed, expiring
 * `PUT {base_url}/v1/uploads/<key>` to this service and served at `GET {base_url}/files/<key>`
 * (attachments) or at a signed, expiring `GET {base_url}/v1/downloads/<key>` (exports).
 * An upload streams into a temporary file outside the served tree and is renamed into place once
 * complete, so a reader never sees a partial file. One instance (or a shared volume): use `s3` to scale out.
 */
export class LocalObjectStorage extends ObjectStorage {
  readonly driver = 'local' as const;
  readonly filesDir: string;
  private readonly partialDir: string;
  private readonly ephemeralRoot: string | null;
  private readonly logger = new Logger('LocalStorage');

  constructor(
    private readonly config: AppConfig,
    readonly signer: UploadSigner,
  ) {
    super();
    if (config.SERVICE_DATA_DIR.startsWith('memory://')) {
      // an in-memory database leaves nothing behind; neither do its files
      this.ephemeralRoot = mkdtempSync(join(tmpdir(), 'chat-service-files-'));
      this.filesDir = join(this.ephemeralRoot, 'files');
      this.partialDir = join(this.ephemeralRoot, 'partial');
    } else {
      this.ephemeralRoot = null;
      this.filesDir = resolve(config.SERVICE_DATA_DIR, 'files');
      this.partialDir = resolve(config.SERVICE_DATA_DIR, 'uploads-partial');
    }
    mkdirSync(this.filesDir, { recursive: true });
    mkdirSync(this.partialDir, { recursive: true });
  }

  async presignPut(input: PresignPutInput): Promise<PresignedPut> {
    const expires = Math.floor(Date.now() / 1000) + input.expiresInSeconds;
    return {
      // the base URL is read per call: tests learn it only after listen()
      url: this.uploadUrl({
        key: input.key,
        contentType: input.contentType,
        size: input.contentLength,
        expires,
      }),
      headers: { 'Content-Type': input.contentType },
      expiresAt: new Date(expires * 1000),
    };
  }

  uploadUrl(g: UploadGrant): string {
    return `${this.config.baseUrl}/v1/uploads/${encodeKey(g.key)}?${this.signer.query(g)}`;
  }

  /**
   * Streams exactly `size` bytes into the file of `key`. More or fewer bytes throw UploadSizeError
   * (the temporary file is removed); the stored file is replaced atomically. Answers an S3-style ETag.
   */
  async receive(key: string, body: Readable, size: number): Promise<string> {
    const target = this.pathOf(key);
    if (!target) throw new Error(`refusing to store outside the files directory: ${key}`);
    const partial = join(this.partialDir, randomUUID());
    const md5 = createHash('md5');
    let received = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        received += chunk.length;
        if (received > size)
          return done(new UploadSizeError(`the body is longer than the declared ${size} bytes`));
        md5.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(partial, { flags: 'wx', mode: 0o640 }));
      if (received !== size) throw new UploadSizeError(`received ${received} bytes, declared ${size}`);
      await mkdir(dirname(target), { recursive: true });
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return `"${md5.digest('hex')}"`;
  }

  /** Streams the body into a temporary file and renames it into place once complete. */
  async putStream(key: string, body: Readable, _contentType: string): Promise<number> {
    const target = this.pathOf(key);
    if (!target) throw new Error(`refusing to store outside the files directory: ${key}`);
    const partial = join(this.partialDir, randomUUID());
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(partial, { flags: 'wx', mode: 0o640 }));
      await mkdir(dirname(target), { recursive: true });
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return size;
  }

  async delete(key: string): Promise<void> {
    const target = this.pathOf(key);
    if (!target) throw new Error(`refusing to delete outside the files directory: ${key}`);
    await rm(target, { force: true });
  }

  async presignGet(input: PresignGetInput): Promise<PresignedGet> {
    const expires = Math.floor(Date.now() / 1000) + input.expiresInSeconds;
    const query = this.signer.downloadQuery({
      key: input.key,
      contentType: input.contentType,
      filename: input.filename,
      expires,
    });
    return {
      url: `${this.config.baseUrl}${DOWNLOADS_PREFIX}${encodeKey(input.key)}?${query}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  async serve(key: string, _serving: ObjectServing): Promise<ServeTarget | null> {
    const path = this.pathOf(key);
    if (!path) return null;
    try {
      return (await stat(path)).isFile() ? { kind: 'file', path } : null;
    } catch {
      return null;
    }
  }

  /** The file of a key, or null if it would resolve outside the files directory. */
  pathOf(key: string): string | null {
    const path = resolve(this.filesDir, ...key.split('/'));
    return path.startsWith(this.filesDir + sep) ? path : null;
  }

  close(): void {
    if (!this.ephemeralRoot) return;
    try {
      rmSync(this.ephemeralRoot, { recursive: true, force: true });
    } catch (e) {
      this.logger.warn(`could not remove ${this.ephemeralRoot}: ${String(e)}`);
    }
  }
}
