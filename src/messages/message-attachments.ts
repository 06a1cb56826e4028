import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { AppError } from '../common/errors/app-error';
import {
  DEFAULT_ALLOWED_ATTACHMENT_TYPES,
  IMAGE_TYPES,
  mimeTypeOfUrl,
} from '../attachments/attachment-types';
import type { AttachmentView } from '../contract/events';
import { AttachmentLookup } from '../attachments/attachment-lookup';

export interface ResolvedAttachment {
  type: 'image' | 'file';
  /** What the presign recorded about the file, when this service issued it; else null. */
  attachment: AttachmentView | null;
}

/**
 * Turns an attachment URL (already known to start with the public base URL) into the message type and
 * its metadata.
 */
export abstract class MessageAttachments {
  abstract resolve(m: EntityManager, workspaceId: string, url: string): Promise<ResolvedAttachment>;
}

/**
 * A key this service presigned carries its recorded type, size and name; any other URL under the
 * public base (uploaded some other way) gets its type from the file extension and no metadata.
 */
@Injectable()
export class PresignedAttachments extends MessageAttachments {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lookup: AttachmentLookup,
  ) {
    super();
  }

  async resolve(m: EntityManager, workspaceId: string, url: string): Promise<ResolvedAttachment> {
    const found = await this.lookup.find(workspaceId, url, m);
    const mime = found?.mime_type ?? mimeTypeOfUrl(url);
    const allowed = this.config.SERVICE_ALLOWED_ATTACHMENT_TYPES ?? DEFAULT_ALLOWED_ATTACHMENT_TYPES;
    if (!allowed.includes(mime))
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Attachments of type ${mime} are not allowed`);
    return { type: IMAGE_TYPES.includes(mime) ? 'image' : 'file', attachment: found };
  }
}
