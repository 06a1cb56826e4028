import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { AppError } from '../common/errors/app-error';
import { DEFAULT_ALLOWED_ATTACHMENT_TYPES, IMAGE_TYPES, mimeTypeOfUrl } from './attachment-types';
import type { AttachmentView } from './message-view.service';

export interface ResolvedAttachment {
  type: 'image' | 'file';
  /** What the presign recorded about the file, when this service issued it; else null. */
  attachment: AttachmentView | null;
}

/**
 * Turns an attachment URL (already known to start with the public base URL) into the message type and
 * its metadata. The attachments feature replaces the default with one that reads its presign records.
 */
export abstract class MessageAttachments {
  abstract resolve(m: EntityManager, workspaceId: string, url: string): Promise<ResolvedAttachment>;
}

/** Until presign records exist: the type follows the URL's file extension; no metadata. */
@Injectable()
export class ExtensionAttachments extends MessageAttachments {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async resolve(_m: EntityManager, _workspaceId: string, url: string): Promise<ResolvedAttachment> {
    const mime = mimeTypeOfUrl(url);
    const allowed = this.config.SERVICE_ALLOWED_ATTACHMENT_TYPES ?? DEFAULT_ALLOWED_ATTACHMENT_TYPES;
    if (!allowed.includes(mime))
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Attachments of type ${mime} are not allowed`);
    return { type: IMAGE_TYPES.includes(mime) ? 'image' : 'file', attachment: null };
  }
}
