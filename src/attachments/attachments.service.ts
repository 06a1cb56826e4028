import { Inject, Injectable } from '@nestjs/common';
import { ChannelAccess } from '../channels/channel-access.service';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { ObjectStorage, publicUrlOf } from '../infra/storage/object-storage';
import { DEFAULT_ALLOWED_ATTACHMENT_TYPES } from './attachment-types';
import { AttachmentsRepository } from './attachments.repository';
import { PresignAttachmentDto, PresignResponseDto } from './dto/presign.dto';
import { sanitizeFilename } from './filename';

/** SPEC.md: presigned upload URLs live 15 minutes. */
export const PRESIGN_TTL_SECONDS = 15 * 60;

/** `Image/PNG; charset=x` → `image/png`: the type proper, lower case. */
export function normalizeMimeType(raw: string): string {
  return (raw.split(';')[0] ?? '').trim().toLowerCase();
}

@Injectable()
export class AttachmentsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storage: ObjectStorage,
    private readonly uploads: AttachmentsRepository,
    private readonly access: ChannelAccess,
  ) {}

  get allowedTypes(): string[] {
    return this.config.SERVICE_ALLOWED_ATTACHMENT_TYPES ?? DEFAULT_ALLOWED_ATTACHMENT_TYPES;
  }

  /**
   * Checks, in order: the channel (404 elsewhere, 403 NOT_A_MEMBER for a user outside it), the type
   * (415) and the size (413); then generates the key and a URL bound to exactly that type and size.
   */
  async presign(p: WorkspacePrincipal, dto: PresignAttachmentDto): Promise<PresignResponseDto> {
    let channelId: string | null = null;
    if (dto.channel_id !== undefined) channelId = (await this.access.open(p, dto.channel_id)).channel.id;

    const mime = normalizeMimeType(dto.mime_type);
    if (!this.allowedTypes.includes(mime)) {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Attachments of type ${mime || dto.mime_type} are not allowed`,
      );
    }
    const max = this.config.SERVICE_MAX_ATTACHMENT_SIZE_BYTES;
    if (dto.size_bytes > max) {
      throw new AppError('ATTACHMENT_TOO_LARGE', `Attachments may be at most ${max} bytes`, [
        { field: 'size_bytes', message: `must be at most ${max}` },
      ]);
    }

    const name = sanitizeFilename(dto.filename);
    const key = `${p.workspaceId}/${newId()}/${name.key}`;
    const put = await this.storage.presignPut({
      key,
      contentType: mime,
      contentLength: dto.size_bytes,
      expiresInSeconds: PRESIGN_TTL_SECONDS,
    });
    await this.uploads.insert({
      key,
      workspaceId: p.workspaceId,
      channelId,
      userId: p.kind === 'user' ? p.userId : null,
      filename: name.display,
      mimeType: mime,
      sizeBytes: dto.size_bytes,
      driver: this.storage.driver,
      expiresAt: put.expiresAt,
    });
    return {
      upload_url: put.url,
      method: 'PUT',
      headers: put.headers,
      public_url: publicUrlOf(this.config.publicFilesUrl, key),
      key,
      expires_at: put.expiresAt.toISOString(),
    };
  }
}
