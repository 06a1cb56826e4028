import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { decodeKeyPath } from '../infra/storage/object-storage';
import { AttachmentsRepository } from './attachments.repository';

/** CONTRACT §7's `attachment` object. */
export interface AttachmentMetadata {
  url: string;
  mime_type: string;
  size_bytes: number;
  filename: string;
}

/**
 * What the presign recorded about an attachment URL, for messages: a URL under the public base URL
 * whose key this service issued to the same workspace gives its declared type, size and file name.
 * Anything else (another prefix, a foreign or unknown key, a query string) is null.
 */
@Injectable()
export class AttachmentLookup {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly uploads: AttachmentsRepository,
  ) {}

  async find(workspaceId: string, url: string, m?: EntityManager): Promise<AttachmentMetadata | null> {
    const key = this.keyOf(url);
    if (!key || !key.startsWith(`${workspaceId}/`)) return null;
    const row = await this.uploads.find(workspaceId, key, m);
    if (!row) return null;
    return { url, mime_type: row.mime_type, size_bytes: Number(row.size_bytes), filename: row.filename };
  }

  /** The object key of a public URL (read per call: the public base URL may be set after start-up in tests). */
  keyOf(url: string): string | null {
    const base = this.config.publicFilesUrl;
    if (!url.startsWith(base)) return null;
    let rest = url.slice(base.length);
    if (!base.endsWith('/')) {
      if (!rest.startsWith('/')) return null;
      rest = rest.slice(1);
    }
    if (/[?#]/.test(rest)) return null;
    return decodeKeyPath(rest);
  }
}
