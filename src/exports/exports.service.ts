import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { isoNotNull } from '../common/time';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { QueueService } from '../infra/queue/queue.module';
import { ObjectStorage } from '../infra/storage/object-storage';
import { UsersRepository } from '../users/users.repository';
import type { ExportDto, ExportRequestedDto } from './dto/export.dto';
import { EXPORT_CONTENT_TYPE, EXPORT_JOB } from './export-build.processor';
import { ExportRow, ExportsRepository } from './exports.repository';

/** CONTRACT §20: requesting a user's data export and reading its state. */
@Injectable()
export class ExportsService {
  private readonly logger = new Logger('Exports');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly exports: ExportsRepository,
    private readonly queue: QueueService,
    private readonly storage: ObjectStorage,
  ) {}

  /**
   * Records a pending export (or answers the user's export already pending) and enqueues its build.
   * The row comes first: an enqueue that fails (Redis away) leaves a pending row the sweeper enqueues.
   */
  async request(workspaceId: string, externalId: string): Promise<ExportRequestedDto> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    const row = await this.exports.requestFor(workspaceId, user);
    try {
      await this.queue.add(EXPORT_JOB, { exportId: row.id }, { jobId: row.id });
    } catch (err) {
      this.logger.warn(`export ${row.id}: enqueue failed, the sweeper will retry: ${String(err)}`);
    }
    return { id: row.id, status: 'pending' };
  }

  /** The export of this workspace (`id` is a UUID: the route's pipe); a ready one with a download URL signed now. */
  async get(workspaceId: string, id: string): Promise<ExportDto> {
    const row = await this.exports.find(workspaceId, id);
    if (!row) throw AppError.notFound('Export');
    return this.view(row);
  }

  private async view(row: ExportRow): Promise<ExportDto> {
    const out: ExportDto = {
      id: row.id,
      user_external_id: row.user_external_id,
      status: row.status,
      created_at: isoNotNull(row.created_at),
    };
    if (row.expires_at) out.expires_at = isoNotNull(row.expires_at);
    if (row.status === 'ready' && row.object_key && row.expires_at) {
      // never valid past the export's own deletion
      const left = Math.floor((row.expires_at.getTime() - Date.now()) / 1000);
      const ttl = Math.max(1, Math.min(this.config.SERVICE_EXPORT_DOWNLOAD_TTL_SECONDS, left));
      const signed = await this.storage.presignGet({
        key: row.object_key,
        contentType: EXPORT_CONTENT_TYPE,
        filename: `user-export-${row.id}.json`,
        expiresInSeconds: ttl,
      });
      out.download_url = signed.url;
    }
    return out;
  }
}
